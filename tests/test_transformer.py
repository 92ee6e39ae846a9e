"""The transformer tagger: sub-token alignment, windows, linear and CRF heads, artifacts, detector, CLI.

Every encoder here is a tiny random BERT built in a temporary folder (``transformer_fixtures``); nothing
is downloaded. Training runs on a generated, repetitive corpus in a few seconds on one CPU thread.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import torch

from clinideid.detect.base import build_detector
from clinideid.detect.transformer import (
    IGNORE,
    TransformerDetector,
    TransformerModel,
    align_labels,
    first_subtokens,
    load_encoder,
    load_tokenizer,
    require_transformers,
    subtoken_counts,
    subtoken_windows,
)
from clinideid.document import Document
from clinideid.errors import ConfigError, InputError, ModelError
from clinideid.text import tokenize
from clinideid.train.config import TransformerConfig, parse_train_config
from clinideid.train.crf import score_predictions
from clinideid.train.transformer import linear_schedule, train_transformer
from crf_fixtures import _SYLLABLES, make_corpus
from transformer_fixtures import make_encoder, make_roberta_encoder

ZWSP = "\u200b"  # a zero-width space: a clinideid token that a BERT tokenizer drops (no sub-token)
HAND_VOCAB = ["nombre", ":", "juan", "pe", "##rez", "12", "##34", "##5", ".", "dr"]


def config(encoder: Path | str | None, **kw) -> TransformerConfig:
    return TransformerConfig(encoder=None if encoder is None else str(encoder), threads=1, **kw)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models on a shared CPU: one torch thread is much faster than contended ones."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Document], list[Document]]:
    return make_corpus(30, seed=1), make_corpus(8, seed=2, prefix="dev")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory, corpus) -> Path:
    train, _ = corpus
    return make_encoder(
        tmp_path_factory.mktemp("enc") / "tiny-bert", [d.text for d in train], pieces=_SYLLABLES
    )


@pytest.fixture(scope="module")
def hand_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_encoder(tmp_path_factory.mktemp("enc") / "hand", vocab=HAND_VOCAB)


def train_config(encoder: Path, **kw) -> dict:
    section = {
        "encoder": str(encoder),
        "max_subtokens": 64,
        "overlap": 8,
        "lr": 1e-2,
        "epochs": 12,
        "batch_size": 8,
        "patience": 4,
        "warmup": 0.05,
        "threads": 1,
    }
    return {"model": "transformer", "transformer": section | kw}


def strict_f1(model: TransformerModel, docs: list[Document]) -> float:
    return score_predictions(docs, model.predict_spans(docs), ("strict",))["strict"].micro.f1


@pytest.fixture(scope="module")
def trained_linear(tmp_path_factory: pytest.TempPathFactory, encoder: Path, corpus) -> Path:
    train, dev = corpus
    out = tmp_path_factory.mktemp("tf") / "linear"
    cfg = parse_train_config({**train_config(encoder), "label_scheme": "BIO"})
    result = train_transformer(train, dev, cfg, out_dir=out, name="linear", seed=3, language="es")
    assert result.best_epoch >= 1 and result.history[0]["loss"] > result.history[-1]["loss"]
    return out


@pytest.fixture(scope="module")
def trained_crf(tmp_path_factory: pytest.TempPathFactory, encoder: Path, corpus) -> Path:
    train, dev = corpus
    out = tmp_path_factory.mktemp("tf") / "crf"
    cfg = parse_train_config(train_config(encoder, crf=True, epochs=8))
    train_transformer(train, dev, cfg, out_dir=out, name="crf", seed=3, language="es")
    return out


# -- alignment ----------------------------------------------------------------------------------------------


def test_labels_go_on_first_subtokens_hand_checked(hand_encoder: Path) -> None:
    model = TransformerModel.from_encoder(config(hand_encoder), ["O", "B-PATIENT", "I-PATIENT", "B-ID"])
    words = ["Nombre", ":", "Juan", "Pérez", ZWSP, "12345", "."]
    tags = [0, 0, 1, 2, 0, 3, 0]
    [ex] = model.encode_windows([words], [tags])
    pieces = model.tokenizer.convert_ids_to_tokens(ex.input_ids)
    assert pieces == ["[CLS]", "nombre", ":", "juan", "pe", "##rez", "12", "##34", "##5", ".", "[SEP]"]
    # the zero-width space has no sub-token: it is skipped without shifting the words after it
    assert ex.first == [1, 2, 3, 4, 6, 9]
    assert ex.words == [0, 1, 2, 3, 5, 6]
    assert ex.labels == [IGNORE, 0, 0, 1, 2, IGNORE, 3, IGNORE, IGNORE, 0, IGNORE]
    assert subtoken_counts(model.tokenizer, words) == [1, 1, 1, 2, 0, 3, 1]


def test_align_and_first_subtokens_on_word_ids() -> None:
    word_ids = [None, 0, 0, 1, 3, 3, 3, None]
    assert align_labels(word_ids, [5, 6, 7, 8]) == [IGNORE, 5, IGNORE, 6, 8, IGNORE, IGNORE, IGNORE]
    assert first_subtokens(word_ids) == ([1, 3, 4], [0, 1, 3])


# -- windows ------------------------------------------------------------------------------------------------


def test_subtoken_windows_hand_checked() -> None:
    wins = subtoken_windows([1] * 10, budget=4, overlap=2)
    assert [(w.start, w.end) for w in wins] == [(0, 4), (2, 6), (4, 8), (6, 10)]
    # a shared word belongs to the window where it is farther from an edge
    assert [(w.own_start, w.own_end) for w in wins] == [(0, 3), (3, 5), (5, 7), (7, 10)]
    # a word longer than the budget is a window of its own; words without sub-tokens cost nothing
    wins = subtoken_windows([2, 9, 0, 0, 2, 1], budget=4, overlap=1)
    assert [(w.start, w.end) for w in wins] == [(0, 1), (1, 2), (2, 6)]
    assert subtoken_windows([], budget=4, overlap=1) == []
    with pytest.raises(ConfigError, match="at least one sub-token"):
        subtoken_windows([1], budget=0, overlap=0)


@pytest.mark.parametrize("seed", range(20))
def test_subtoken_windows_fit_progress_and_own_every_word_once(seed: int) -> None:
    rng = random.Random(seed)
    counts = [rng.choice([0, 1, 1, 1, 2, 3, 7]) for _ in range(rng.randint(1, 120))]
    budget, overlap = rng.randint(3, 20), rng.randint(0, 10)
    wins = subtoken_windows(counts, budget, overlap)
    owned = [i for w in wins for i in range(w.own_start, w.own_end)]
    assert owned == list(range(len(counts)))
    for a, b in itertools.pairwise(wins):
        assert b.start > a.start and b.end > a.end and a.end - b.start <= overlap
    for w in wins:
        assert len(w) == 1 or sum(counts[w.start : w.end]) <= budget
        assert w.start <= w.own_start <= w.own_end <= w.end


def test_long_document_takes_each_word_from_its_owning_window(hand_encoder: Path, monkeypatch) -> None:
    model = TransformerModel.from_encoder(config(hand_encoder, max_subtokens=12, overlap=3), ["O", "B-X"])
    text = " ".join(["Nombre : Juan Pérez 12345 .", ZWSP] * 8)
    tokens = tokenize(text)
    words = [t.text for t in tokens]
    wins = model.windows(words)
    assert len(wins) > 3 and all(
        len(e) <= 12 for e in model.encode_windows([words[w.start : w.end] for w in wins])
    )

    def by_window(examples):  # window k predicts tag 1 with probability k/100 on every word
        return [([1] * len(e.first), [k / 100] * len(e.first)) for k, e in enumerate(examples)]

    monkeypatch.setattr(model, "predict_examples", by_window)
    [(toks, labels, probs)] = model.tag_documents([Document("long", text)])
    assert len(toks) == len(tokens)
    for k, w in enumerate(wins):
        for i in range(w.own_start, w.own_end):
            if words[i] == ZWSP:  # no sub-token: O, whatever the window says
                assert labels[i] == "O" and probs[i] == 1.0
            else:
                assert labels[i] == "B-X" and probs[i] == k / 100
    assert model.tag_documents([Document("long", text)])[0] == (toks, labels, probs)


def test_max_subtokens_is_capped_by_the_encoder(encoder: Path) -> None:
    model = TransformerModel.from_encoder(config(encoder, max_subtokens=1000), ["O"])
    assert model.max_length == 128 and model.budget == 126


def test_half_precision_encoders_run_in_float32(encoder: Path, tmp_path: Path) -> None:
    from transformers import AutoModel

    half = AutoModel.from_pretrained(str(encoder), local_files_only=True).half()
    half.save_pretrained(str(tmp_path / "half"))
    load_tokenizer(encoder).save_pretrained(str(tmp_path / "half"))
    model = TransformerModel.from_encoder(config(tmp_path / "half"), ["O", "B-X"])
    assert {p.dtype for p in model.module.parameters()} == {torch.float32}
    [(_, labels, _)] = model.tag_documents([Document("d", "Nombre: Juan.")])
    assert len(labels) == 4


def test_byte_level_tokenizers_read_words_after_a_space(tmp_path: Path, corpus) -> None:
    train, _ = corpus
    path = make_roberta_encoder(tmp_path / "tiny-roberta", [d.text for d in train[:10]])
    model = TransformerModel.from_encoder(config(path, max_subtokens=512), ["O", "B-X"])
    assert model.tokenizer.add_prefix_space
    assert model.max_length == 64  # RoBERTa positions start after the padding index
    [ex] = model.encode_windows([["Nombre", ":", "Juan", ZWSP, "12"]], [[0, 0, 1, 0, 1]])
    pieces = model.tokenizer.convert_ids_to_tokens(ex.input_ids)
    assert all(pieces[p].startswith("Ġ") for p in ex.first)  # each word as if after a space
    # byte-level BPE drops nothing: even the zero-width space has a sub-token
    assert [ex.labels[p] for p in ex.first] == [0, 0, 1, 0, 1] and ex.words == [0, 1, 2, 3, 4]


# -- training and inference ---------------------------------------------------------------------------------


def test_linear_head_learns_the_generated_corpus(trained_linear: Path, corpus) -> None:
    train, _ = corpus
    meta = json.loads((trained_linear / "model.json").read_text(encoding="utf-8"))
    assert meta["model_type"] == "transformer" and meta["label_scheme"] == "BIO"
    assert meta["training_config"]["transformer"]["crf"] is False
    assert meta["encoder"]["dir"] == "encoder" and meta["encoder"]["base"] == "tiny-bert"
    assert (trained_linear / "encoder" / "config.json").is_file() and (
        trained_linear / "metrics.json"
    ).is_file()
    model = TransformerModel.load(trained_linear)
    assert strict_f1(model, train) >= 0.9
    assert meta["dev_metrics"]["strict"]["f1"] >= 0.7


def test_crf_head_learns_the_generated_corpus(trained_crf: Path, corpus) -> None:
    train, dev = corpus
    model = TransformerModel.load(trained_crf)
    assert model.module.crf is not None
    assert strict_f1(model, train) >= 0.9 and strict_f1(model, dev) >= 0.9


def test_save_load_gives_identical_predictions(trained_crf: Path, tmp_path: Path, corpus) -> None:
    _, dev = corpus
    a = TransformerModel.load(trained_crf)
    # the reloaded model scores exactly what training recorded for the selected epoch
    meta = json.loads((trained_crf / "model.json").read_text(encoding="utf-8"))
    assert strict_f1(a, dev) == pytest.approx(meta["dev_metrics"]["strict"]["f1"], abs=1e-4)
    assert a.metadata is not None
    a.save(tmp_path / "copy", a.metadata)
    b = TransformerModel.load(tmp_path / "copy")
    for doc in dev[:4]:
        [(_, la, pa)] = a.tag_documents([doc])
        [(_, lb, pb)] = b.tag_documents([doc])
        assert la == lb and pa == pytest.approx(pb, abs=1e-6)


def test_batching_does_not_change_predictions(trained_linear: Path, corpus) -> None:
    _, dev = corpus
    model = TransformerModel.load(trained_linear, batch_size=1)
    one_by_one = [model.predict_spans([d])[0] for d in dev]
    model.batch_size = 16
    for a, b in zip(model.predict_spans(dev), one_by_one, strict=True):
        assert [(s.start, s.end, s.label) for s in a] == [(s.start, s.end, s.label) for s in b]
        assert [s.score for s in a] == pytest.approx([s.score for s in b], abs=1e-4)


def test_training_is_reproducible_and_freezing_keeps_the_encoder(
    encoder: Path, corpus, tmp_path: Path
) -> None:
    train, dev = corpus
    cfg = parse_train_config(train_config(encoder, epochs=1, freeze_encoder=True, crf=True, lr=1e-3))
    models = []
    for run in ("a", "b"):
        train_transformer(train[:8], dev[:2], cfg, out_dir=tmp_path / run, name=run, seed=7)
        models.append(TransformerModel.load(tmp_path / run))
    a, b = models
    for key, tensor in a.module.state_dict().items():
        assert torch.equal(tensor, b.module.state_dict()[key]), key
    base = TransformerModel.from_encoder(config(encoder), ["O"]).module.encoder.state_dict()
    for key, tensor in a.module.encoder.state_dict().items():
        assert torch.equal(tensor, base[key]), key


def test_linear_schedule_warms_up_then_decays() -> None:
    f = linear_schedule(2, 10)
    assert [round(f(s), 3) for s in (0, 1, 2, 6, 10)] == [0.333, 0.667, 1.0, 0.5, 0.0]


# -- detector and CLI ---------------------------------------------------------------------------------------


def test_detector_from_config(trained_crf: Path, corpus) -> None:
    train, _ = corpus
    detector = build_detector({"type": "transformer", "model": str(trained_crf), "batch_size": 4})
    assert isinstance(detector, TransformerDetector)
    found = detector.detect([*train[:3], Document("empty", ""), Document("blank", f" \n{ZWSP}\t ")])
    assert found[3] == [] and found[4] == []
    for doc, spans in zip(train[:3], found, strict=False):
        assert {(s.start, s.end, s.label) for s in spans} == {(s.start, s.end, s.label) for s in doc.spans}
        assert all(s.source == "transformer" and s.explanation == "transformer:crf" for s in spans)
        assert all(0 < s.score <= 1 for s in spans)
    assert detector.to_config()["model"] == str(trained_crf)
    strict = build_detector({"type": "transformer", "model": str(trained_crf), "min_score": 1.01})
    assert strict.detect(train[:1]) == [[]]
    with pytest.raises(ConfigError, match="labels"):
        TransformerDetector(trained_crf, labels="native")
    with pytest.raises(ConfigError, match="batch_size"):
        TransformerDetector(trained_crf, batch_size=0)


def test_train_cli_fine_tunes_an_encoder(tmp_path: Path, encoder: Path, corpus) -> None:
    from typer.testing import CliRunner

    from clinideid.cli import _register_commands, app
    from clinideid.formats import write_corpus

    _register_commands()
    train, dev = corpus
    write_corpus(train[:10], tmp_path / "train", "brat")
    write_corpus(dev[:3], tmp_path / "dev", "brat")
    cfg = train_config("unused", epochs=2)
    del cfg["transformer"]["encoder"]
    (tmp_path / "cfg.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    args = [
        "train",
        "--model",
        "transformer",
        "--train",
        str(tmp_path / "train"),
        "--dev",
        str(tmp_path / "dev"),
    ]
    args += ["--config", str(tmp_path / "cfg.yaml"), "--out", str(tmp_path / "model")]
    result = CliRunner().invoke(app, [*args, "--encoder", str(encoder)])
    assert result.exit_code == 0, result.output
    assert "selected epoch" in result.output and "dev strict" in result.output
    meta = json.loads((tmp_path / "model" / "model.json").read_text(encoding="utf-8"))
    assert meta["training_config"]["transformer"]["encoder"] == str(encoder)
    assert isinstance(
        build_detector({"type": "transformer", "model": str(tmp_path / "model")}), TransformerDetector
    )
    result = CliRunner().invoke(app, args)  # no encoder anywhere
    assert isinstance(result.exception, ConfigError) and "--encoder" in str(result.exception)
    crf_args = [*args[:2], "crf", *args[3:7], "--out", str(tmp_path / "crf"), "--encoder", str(encoder)]
    result = CliRunner().invoke(app, crf_args)
    assert isinstance(result.exception, ConfigError) and "--model transformer" in str(result.exception)


# -- errors -------------------------------------------------------------------------------------------------


def test_missing_or_non_local_encoder_is_a_clear_error(tmp_path: Path, corpus) -> None:
    with pytest.raises(ModelError, match=r"not a local directory.*never downloads"):
        TransformerModel.from_encoder(config("bert-base-multilingual-cased"), ["O"])
    with pytest.raises(ModelError, match="not a local directory"):
        TransformerModel.from_encoder(config(tmp_path / "missing"), ["O"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match=r"no config\.json"):
        TransformerModel.from_encoder(config(tmp_path / "empty"), ["O"])
    (tmp_path / "empty" / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot be loaded"):
        TransformerModel.from_encoder(config(tmp_path / "empty"), ["O"])
    with pytest.raises(ConfigError, match="needs an encoder"):
        TransformerModel.from_encoder(config(None), ["O"])
    (tmp_path / "t5").mkdir()
    (tmp_path / "t5" / "config.json").write_text('{"model_type": "t5"}', encoding="utf-8")
    with pytest.raises(ModelError, match="encoder-decoder"):
        load_encoder(tmp_path / "t5")
    train, dev = corpus
    cfg = parse_train_config({"model": "transformer", "transformer": {"encoder": str(tmp_path / "missing")}})
    with pytest.raises(ModelError, match="not a local directory"):
        train_transformer(train[:2], dev[:1], cfg, out_dir=tmp_path / "m", name="m")
    with pytest.raises(InputError, match="no annotated"):
        train_transformer([Document("d", "text")], dev[:1], cfg, out_dir=tmp_path / "m", name="m")


def test_broken_models_are_model_errors(trained_linear: Path, tmp_path: Path) -> None:
    def broken(name: str) -> tuple[Path, dict]:
        path = tmp_path / name
        shutil.copytree(trained_linear, path)
        return path, json.loads((path / "model.json").read_text(encoding="utf-8"))

    def write(path: Path, meta: dict) -> None:
        (path / "model.json").write_text(json.dumps(meta), encoding="utf-8")

    path, meta = broken("crf-config")  # the config says CRF, the head has none
    meta["training_config"]["transformer"]["crf"] = True
    write(path, meta)
    with pytest.raises(ModelError, match="head weights do not match"):
        TransformerModel.load(path)
    path, meta = broken("bad-config")
    meta["training_config"]["transformer"]["max_subtokens"] = 2
    write(path, meta)
    with pytest.raises(ModelError, match=r"training_config\.transformer"):
        TransformerModel.load(path)
    path, meta = broken("labels")
    meta["labels"] = ["PATIENT"]
    write(path, meta)
    with pytest.raises(ModelError, match="tags do not match"):
        TransformerModel.load(path)
    path, meta = broken("no-encoder")
    shutil.rmtree(path / "encoder")
    with pytest.raises(ModelError, match=r"encoder folder .* is missing"):
        TransformerModel.load(path)
    path, meta = broken("escape")
    meta["encoder"]["dir"] = "../elsewhere"
    write(path, meta)
    with pytest.raises(ModelError, match="plain folder name"):
        TransformerModel.load(path)
    path, meta = broken("corrupt")
    (path / meta["weights"]).write_bytes(gzip.compress(b"not a torch file"))
    with pytest.raises(ModelError, match="corrupt"):
        TransformerModel.load(path)
    with pytest.raises(ModelError, match="model_type"):
        TransformerModel.load("es-meddocan-crf")


def test_transformers_missing_is_a_clear_error(trained_linear: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers now raises ImportError
    with pytest.raises(ModelError, match=r"clinideid\[transformers\]"):
        require_transformers()
    with pytest.raises(ModelError, match=r"clinideid\[transformers\]"):
        build_detector({"type": "transformer", "model": str(trained_linear)})


def test_package_imports_without_transformers() -> None:
    code = (
        "import sys; sys.modules['transformers'] = None\n"
        "import clinideid.detect.transformer, clinideid.train.transformer\n"
        "from clinideid.train.config import parse_train_config\n"
        "from clinideid.detect.base import available_detectors\n"
        "assert parse_train_config({'model': 'transformer'}).transformer.max_subtokens == 256\n"
        "assert 'transformer' in available_detectors()\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_training_config_section_is_validated() -> None:
    cfg = parse_train_config({"model": "transformer", "transformer": {"encoder": "x", "crf": True}})
    assert cfg.transformer.crf and cfg.transformer.lr == 5e-5
    with pytest.raises(ConfigError, match=r"transformer\.bogus"):
        parse_train_config({"model": "transformer", "transformer": {"bogus": 1}})
    with pytest.raises(ConfigError, match=r"transformer\.max_subtokens"):
        parse_train_config({"model": "transformer", "transformer": {"max_subtokens": 4}})
