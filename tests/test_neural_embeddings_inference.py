"""Pre-trained vectors kept at inference (``keep_vectors``): a frozen, bounded table for words outside the
training vocabulary; training unchanged; save/load round trip; models without it tag as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.detect.neural.embeddings import WordEmbedding
from clinideid.detect.neural.frozen_vectors import frequent_vectors
from clinideid.detect.neural.tagger import NeuralModel
from clinideid.detect.neural.vocab import normalize_word
from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.formats import write_corpus
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus

_register_commands()

DIM = 6
#: words the generated corpus never uses, most frequent first in the vectors file
UNSEEN = ["castroverde", "hospitalizado", "quirófano", "gastroscopia"]
TOP = 3  # keeps the first three unseen words; "gastroscopia" falls beyond the cut


def _config(keep: bool, vectors: Path) -> dict:
    neural = {
        "epochs": 2,
        "batch_size": 4,
        "threads": 1,
        "word_dim": DIM,
        "vectors": str(vectors),
        "keep_vectors": keep,
        "keep_vectors_top": TOP,
    }
    return {"model": "neural", "window_size": 40, "window_overlap": 8, "neural": neural}


def _vector(k: int) -> list[float]:
    return [round(0.1 * (k + 1) + 0.01 * d, 4) for d in range(DIM)]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Document], list[Document]]:
    return make_corpus(12, seed=1), make_corpus(4, seed=2, prefix="dev")


@pytest.fixture(scope="module")
def vectors(tmp_path_factory: pytest.TempPathFactory, corpus: tuple[list, list]) -> Path:
    """word2vec text vectors: training words and unseen words interleaved, most frequent first."""
    train, _ = corpus
    seen = list(dict.fromkeys(normalize_word(t.text) for d in train for t in tokenize(d.text)))[:10]
    words = [w for pair in zip(seen, UNSEEN, strict=False) for w in pair] + seen[len(UNSEEN) :]
    path = tmp_path_factory.mktemp("vectors") / "vectors.txt"
    lines = [f"{len(words)} {DIM}"] + [f"{w} {' '.join(map(str, _vector(k)))}" for k, w in enumerate(words)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _train(root: Path, name: str, keep: bool, vectors: Path, corpus: tuple[list, list]):  # type: ignore[no-untyped-def]
    train, dev = corpus
    cfg = parse_train_config(_config(keep, vectors))
    return train_neural(train, dev, cfg, out_dir=root / name, name=name, seed=3, language="es")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, vectors: Path, corpus: tuple[list, list]):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("keep_vectors")
    return _train(root, "plain", False, vectors, corpus), _train(root, "kept", True, vectors, corpus)


def _vector_of(path: Path, word: str) -> list[float]:
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        key, *values = line.split(" ")
        if key == word:
            return [float(v) for v in values]
    raise KeyError(word)


def test_frequent_vectors_skip_the_vocabulary_and_stop_at_top_n(tmp_path: Path) -> None:
    path = tmp_path / "v.txt"
    path.write_text("5 2\nFecha 1 2\nfecha 9 9\nnhc 3 4\nCastroverde 5 6\n2019 7 8\n", encoding="utf-8")
    words, table = frequent_vectors(path, 2, {"nhc"}, 2)
    assert words == ["fecha", "castroverde"]  # normalised, first vector of a key wins, vocabulary skipped
    assert table.dtype == torch.float16 and table.tolist() == [[1.0, 2.0], [5.0, 6.0]]
    assert frequent_vectors(path, 10, set(), 2)[0] == ["fecha", "nhc", "castroverde", "0000"]
    with pytest.raises(ConfigError, match="word_dim: 2"):
        frequent_vectors(path, 2, set(), 3)


def test_fasttext_bin_table_holds_full_vectors_without_gensim_at_inference(tmp_path: Path) -> None:
    pytest.importorskip("gensim")
    from gensim.models import FastText
    from gensim.models.fasttext import save_facebook_model

    sentences = [
        ["el", "paciente", "ingresa", "hoy"],
        ["paciente", "estable"],
        ["alta", "paciente", "hoy"],
    ] * 5
    ft = FastText(vector_size=DIM, min_count=1, epochs=1, seed=1, workers=1, bucket=1000)
    ft.build_vocab(sentences)
    ft.train(sentences, total_examples=len(sentences), epochs=1)
    path = tmp_path / "ft.bin"
    save_facebook_model(ft, str(path))
    words, table = frequent_vectors(path, 2, {"paciente"}, DIM)
    expected = [w for w in ft.wv.index_to_key if w != "paciente"][:2]  # most frequent first
    assert words == expected
    assert torch.allclose(table.float(), torch.tensor(ft.wv[expected]), atol=1e-2)


def test_frozen_rows_follow_the_vocabulary_and_get_no_gradient() -> None:
    emb = WordEmbedding(4, dim=2, n_frozen=2)
    emb.frozen.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))  # type: ignore[union-attr]
    ids = torch.tensor([[2, 4, 5, 1, 0]])
    out = emb(ids)
    assert out[0, 1].tolist() == [1.0, 2.0] and out[0, 2].tolist() == [3.0, 4.0]
    assert torch.equal(out[0, [0, 3, 4]], emb.embed(torch.tensor([2, 1, 0])))
    out.sum().backward()
    assert emb.embed.weight.grad is not None and not emb.frozen.requires_grad  # type: ignore[union-attr]
    assert "frozen" in emb.state_dict() and "frozen" not in WordEmbedding(4, dim=2).state_dict()


def test_an_unseen_word_gets_its_vector_at_inference(trained, vectors: Path) -> None:  # type: ignore[no-untyped-def]
    plain, kept = trained
    model = NeuralModel.load(kept.model_dir)
    assert model.config.keep_vectors and model.vocabs.frozen_words == UNSEEN[:TOP]  # top-N cut
    assert not set(model.vocabs.frozen_words) & set(model.vocabs.words.stoi)
    text = "Paciente que vive en Castroverde, gastroscopia normal."
    example = model.encode([t.text for t in tokenize(text)])
    wid = example.words[4]
    assert wid == len(model.vocabs.words)  # the first frozen id, not <unk>
    assert example.words[6] == 1  # beyond the top-N cut: unknown
    got = model.module.word(torch.tensor([[wid]]))[0, 0]  # type: ignore[misc]
    assert torch.allclose(got, torch.tensor(_vector_of(vectors, "castroverde")), atol=1e-3)
    without = NeuralModel.load(plain.model_dir)
    assert without.vocabs.frozen_words == [] and without.encode(["Castroverde"]).words == [1]
    meta = json.loads((kept.model_dir / "model.json").read_text(encoding="utf-8"))
    assert meta["training_config"]["neural"]["keep_vectors"] is True


def test_training_is_unchanged_for_words_seen_in_training(trained) -> None:  # type: ignore[no-untyped-def]
    plain, kept = trained
    assert [h["loss"] for h in plain.history] == [h["loss"] for h in kept.history]
    a, b = NeuralModel.load(plain.model_dir), NeuralModel.load(kept.model_dir)
    assert a.vocabs.words.itos == b.vocabs.words.itos
    # the dev notes hold none of the table's words either, so the same epoch is selected
    assert plain.best_epoch == kept.best_epoch
    sa, sb = a.module.state_dict(), b.module.state_dict()
    assert set(sb) - set(sa) == {"word.frozen"}
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_save_load_round_trip(trained, corpus: tuple[list, list], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, kept = trained
    model = NeuralModel.load(kept.model_dir)
    assert model.module.word.frozen.dtype == torch.float16  # type: ignore[union-attr]
    again = NeuralModel.from_bytes(model.to_bytes(half=True), model.config)
    assert again.vocabs.frozen_words == model.vocabs.frozen_words
    assert torch.equal(again.module.word.frozen, model.module.word.frozen)  # type: ignore[union-attr]
    docs = [*corpus[1], Document("x", "Paciente que vive en Castroverde, hospitalizado en quirófano.")]
    assert model.predict_spans(docs) == NeuralModel.from_bytes(model.to_bytes(), model.config).predict_spans(
        docs
    )
    model.quantize()
    assert len(model.predict_spans(docs)) == len(docs)


#: spans of the shipped model on generated notes, recorded before keep_vectors existed
SHIPPED_SPANS = {
    "old000": [
        (28, 47, "PATIENT"),
        (54, 61, "MEDICALRECORD"),
        (81, 91, "DATE"),
        (150, 157, "AGE"),
        (236, 249, "DOCTOR"),
    ],
    "old001": [
        (28, 43, "PATIENT"),
        (50, 57, "MEDICALRECORD"),
        (77, 87, "DATE"),
        (146, 153, "AGE"),
        (240, 252, "DOCTOR"),
    ],
    "old002": [
        (28, 43, "PATIENT"),
        (50, 57, "MEDICALRECORD"),
        (77, 87, "DATE"),
        (153, 160, "AGE"),
        (240, 256, "DOCTOR"),
    ],
}


def test_shipped_model_without_the_table_tags_as_before() -> None:
    model = NeuralModel.load("es-meddocan-neural")
    assert not model.config.keep_vectors and model.vocabs.frozen_words == []
    assert model.module.word is not None and model.module.word.frozen is None
    docs = make_corpus(3, seed=11, prefix="old")
    got = {
        d.id: [(s.start, s.end, s.label) for s in spans]
        for d, spans in zip(docs, model.predict_spans(docs), strict=True)
    }
    assert got == SHIPPED_SPANS


def test_keep_vectors_options(tmp_path: Path, corpus: tuple[list, list], vectors: Path) -> None:
    write_corpus(corpus[0][:6], tmp_path / "train", "brat")
    write_corpus(corpus[1][:2], tmp_path / "dev", "brat")
    cfg = _config(False, vectors)
    cfg["neural"].update(epochs=1, keep_vectors_top=100)
    (tmp_path / "cfg.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    (tmp_path / "novec.yaml").write_text(json.dumps({"model": "neural"}), encoding="utf-8")
    base = ["train", "--train", str(tmp_path / "train"), "--dev", str(tmp_path / "dev"), "--language", "es"]

    def run(*extra: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(app, [*base, *extra])

    cfg_args = ["--model", "neural", "--config", str(tmp_path / "cfg.yaml")]
    ok = run(*cfg_args, "--out", str(tmp_path / "m"), "--keep-vectors", "--keep-vectors-top", "2")
    assert ok.exit_code == 0, ok.output
    model = NeuralModel.load(tmp_path / "m")
    assert model.config.keep_vectors and model.config.keep_vectors_top == 2
    assert model.vocabs.frozen_words == UNSEEN[:2]
    novec = ["--model", "neural", "--config", str(tmp_path / "novec.yaml"), "--out", str(tmp_path / "x")]
    result = run(*novec, "--keep-vectors")
    assert result.exit_code != 0 and "needs pre-trained vectors" in str(result.exception)
    result = run("--model", "crf", "--out", str(tmp_path / "y"), "--keep-vectors-top", "5")
    assert result.exit_code != 0 and "for --model neural" in str(result.exception)
