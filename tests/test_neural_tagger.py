"""The neural tagger end to end: windows, training to a perfect score on a generated corpus, artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from clinideid.detect.base import build_detector
from clinideid.detect.neural.tagger import (
    NeuralDetector,
    NeuralModel,
    clip_chars,
    document_windows,
    length_batches,
    merge_window_probs,
)
from clinideid.errors import ConfigError, ModelError
from clinideid.text import tokenize
from clinideid.text.windows import merge_window_labels
from clinideid.train.config import parse_train_config
from clinideid.train.evaluation import model_detector
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus

TRAIN_CONFIG = {
    "model": "neural",
    "window_size": 40,
    "window_overlap": 8,
    "neural": {
        "optimizer": "adam",
        "lr": 0.01,
        "epochs": 8,
        "batch_size": 4,
        "patience": 3,
        "affix": True,
        "affix_min_count": 2,
        "threads": 1,
    },
}


@pytest.fixture(scope="module")
def corpus() -> tuple[list, list]:
    return make_corpus(30, seed=1), make_corpus(8, seed=2, prefix="dev")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, corpus: tuple[list, list]) -> Path:
    train, dev = corpus
    out = tmp_path_factory.mktemp("neural") / "tiny"
    result = train_neural(
        train, dev, parse_train_config(TRAIN_CONFIG), out_dir=out, name="tiny", seed=3, language="es"
    )
    assert result.best_epoch >= 1
    return out


# -- windows ------------------------------------------------------------------------------------------------


def test_sliding_windows_cover_every_token_once() -> None:
    text = " ".join(f"w{k}" for k in range(50))
    tokens = tokenize(text)
    wins = document_windows(text, tokens, "sliding", size=20, overlap=6)
    owned = [i for w in wins for i in range(w.own_start, w.own_end)]
    assert owned == list(range(len(tokens)))
    assert all(len(w) <= 20 for w in wins)


def test_sentence_windows_group_sentences() -> None:
    text = "Uno dos. Tres cuatro. Cinco seis. Siete."
    tokens = tokenize(text)
    wins = document_windows(text, tokens, "sentences", size=100, sentences=2)
    assert [(w.start, w.end) for w in wins] == [(0, 6), (6, 11)]
    with pytest.raises(ConfigError, match="window mode"):
        document_windows(text, tokens, "pages")


def test_window_merge_takes_each_token_from_its_owner() -> None:
    wins = document_windows("x", [None] * 10, "sliding", size=6, overlap=2)  # type: ignore[list-item]
    labels = [["A"] * len(w) for w in wins[:1]] + [["B"] * len(w) for w in wins[1:]]
    probs = [[0.1] * len(w) for w in wins[:1]] + [[0.9] * len(w) for w in wins[1:]]
    merged = merge_window_labels(10, wins, labels)
    merged_p = merge_window_probs(10, wins, probs)
    first_owned = wins[0].own_end
    assert merged == ["A"] * first_owned + ["B"] * (10 - first_owned)
    assert merged_p == [0.1] * first_owned + [0.9] * (10 - first_owned)


def test_length_buckets_and_char_clipping() -> None:
    batches = length_batches([5, 1, 9, 2, 5], 2)
    assert batches == [[1, 3], [0, 4], [2]]
    assert clip_chars("abcdefghij", 5) == "abcij"
    assert clip_chars("abc", 5) == "abc"


# -- training and inference ---------------------------------------------------------------------------------


def test_tiny_model_overfits_the_generated_corpus(trained: Path, corpus: tuple[list, list]) -> None:
    meta = json.loads((trained / "model.json").read_text(encoding="utf-8"))
    assert meta["model_type"] == "neural" and meta["label_scheme"] == "BIOES"
    assert meta["dev_metrics"]["strict"]["f1"] == 1.0
    assert (trained / "metrics.json").is_file()
    train, _ = corpus
    detector = NeuralDetector(trained)
    found = detector.detect(train[:5])
    for doc, spans in zip(train[:5], found, strict=True):
        assert {(s.start, s.end, s.label) for s in spans} == {(s.start, s.end, s.label) for s in doc.spans}
        assert all(
            s.source == "neural" and s.explanation == "neural:tiny" and 0 < s.score <= 1 for s in spans
        )


def test_save_load_gives_identical_outputs(trained: Path, corpus: tuple[list, list]) -> None:
    _, dev = corpus
    a = NeuralModel.load(trained)
    b = NeuralModel.from_bytes(a.to_bytes(), a.config, metadata=a.metadata, window_size=40, window_overlap=8)
    with torch.inference_mode():
        for doc in dev[:3]:
            ta, tb = a.tag_documents([doc])[0], b.tag_documents([doc])[0]
            assert ta[1] == tb[1] and ta[2] == pytest.approx(tb[2], abs=1e-6)


def test_half_precision_weights_load_as_float32(trained: Path, corpus: tuple[list, list]) -> None:
    _, dev = corpus
    a = NeuralModel.load(trained)
    half = a.to_bytes(half=True)
    assert len(half) < 0.6 * len(a.to_bytes())
    b = NeuralModel.from_bytes(half, a.config, metadata=a.metadata, window_size=40, window_overlap=8)
    assert all(p.dtype == torch.float32 for p in b.module.parameters())
    with torch.inference_mode():
        assert [t[1] for t in a.tag_documents(dev)] == [t[1] for t in b.tag_documents(dev)]


def test_batching_does_not_change_predictions(trained: Path, corpus: tuple[list, list]) -> None:
    _, dev = corpus
    model = NeuralModel.load(trained, batch_size=1)
    one_by_one = [model.predict_spans([d])[0] for d in dev]
    model.batch_size = 16
    batched = model.predict_spans(dev)
    for a, b in zip(batched, one_by_one, strict=True):
        assert [(s.start, s.end, s.label) for s in a] == [(s.start, s.end, s.label) for s in b]
        assert [s.score for s in a] == pytest.approx([s.score for s in b], abs=1e-3)  # float32 sums


def test_quantised_detector_runs(trained: Path, corpus: tuple[list, list]) -> None:
    _, dev = corpus
    detector = build_detector({"type": "neural", "model": str(trained), "quantize": True})
    spans = detector.detect(dev[:2])
    assert len(spans) == 2 and sum(len(s) for s in spans) > 0
    assert detector.to_config()["quantize"] is True


def test_model_detector_loads_neural_models(trained: Path) -> None:
    assert isinstance(model_detector(trained), NeuralDetector)


def test_train_cli_trains_a_neural_model(tmp_path: Path, corpus: tuple[list, list]) -> None:
    from typer.testing import CliRunner

    from clinideid.cli import _register_commands, app
    from clinideid.formats import write_corpus

    _register_commands()

    train, dev = corpus
    write_corpus(train[:12], tmp_path / "train", "brat")
    write_corpus(dev[:4], tmp_path / "dev", "brat")
    cfg = {**TRAIN_CONFIG, "neural": {**TRAIN_CONFIG["neural"], "epochs": 1}}
    (tmp_path / "cfg.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--model",
            "neural",
            "--train",
            str(tmp_path / "train"),
            "--dev",
            str(tmp_path / "dev"),
            "--config",
            str(tmp_path / "cfg.yaml"),
            "--out",
            str(tmp_path / "model"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "selected epoch 1" in result.output
    assert isinstance(model_detector(tmp_path / "model"), NeuralDetector)


# -- errors -------------------------------------------------------------------------------------------------


def test_bad_training_config_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="neural"):
        parse_train_config({"model": "neural", "neural": {"lstm_layers": 3}})
    with pytest.raises(ConfigError, match="at least one of char, word, affix"):
        parse_train_config({"model": "neural", "neural": {"char": False, "word": False}})
    with pytest.raises(ConfigError, match="bogus"):
        parse_train_config({"model": "neural", "neural": {"bogus": 1}})


def test_a_crf_model_is_not_a_neural_model() -> None:
    with pytest.raises(ModelError, match="model_type"):
        NeuralModel.load("es-meddocan-crf")


def test_corrupt_or_mismatched_weights_are_model_errors(trained: Path, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(trained, broken)
    meta = json.loads((broken / "model.json").read_text(encoding="utf-8"))
    meta["training_config"]["neural"]["lstm_hidden"] = 7
    (broken / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match="do not match"):
        NeuralModel.load(broken)
    meta["training_config"]["neural"]["lstm_layers"] = 9
    (broken / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match=r"training_config\.neural"):
        NeuralModel.load(broken)
    import gzip

    (broken / meta["weights"]).write_bytes(gzip.compress(b"not a torch file"))
    meta["training_config"]["neural"]["lstm_layers"] = 1
    (broken / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match="corrupt"):
        NeuralModel.load(broken)


def test_detector_option_errors(trained: Path) -> None:
    with pytest.raises(ConfigError, match="labels"):
        NeuralDetector(trained, labels="native")
    with pytest.raises(ConfigError, match="batch_size"):
        NeuralDetector(trained, batch_size=0)
    with pytest.raises(ConfigError, match="threads"):
        NeuralDetector(trained, threads=0)


def test_detector_tags_with_its_own_thread_count(trained: Path, corpus: tuple[list, list]) -> None:
    before = torch.get_num_threads()
    seen: list[int] = []
    detector = NeuralDetector(trained, threads=1)
    assert detector.to_config()["threads"] == 1
    original = detector.model._tag_documents

    def spy(docs):  # type: ignore[no-untyped-def]
        seen.append(torch.get_num_threads())
        return original(docs)

    detector.model._tag_documents = spy  # type: ignore[method-assign]
    detector.detect(corpus[1][:1])
    assert seen == [1] and torch.get_num_threads() == before


def test_every_block_with_sentence_windows_trains_reproducibly(
    tmp_path: Path, corpus: tuple[list, list]
) -> None:
    train, dev = corpus
    cfg = parse_train_config(
        {
            "model": "neural",
            "window_size": 60,
            "neural": {
                "affix": True,
                "affix_min_count": 2,
                "context": True,
                "context_n": 3,
                "attention": True,
                "lstm_layers": 2,
                "windows": "sentences",
                "sentences_per_window": 2,
                "optimizer": "sgd",
                "class_weighting": True,
                "epochs": 1,
                "threads": 1,
            },
        }
    )
    outs = []
    for run in ("a", "b"):
        result = train_neural(train[:6], dev[:2], cfg, out_dir=tmp_path / run, name=run, seed=7)
        assert result.history[0]["loss"] > 0
        outs.append(NeuralModel.load(tmp_path / run))
    a, b = outs
    for key, tensor in a.module.state_dict().items():
        assert torch.equal(tensor, b.module.state_dict()[key]), key
    assert len(a.predict_spans(dev[:2])) == 2


def test_empty_and_blank_documents_get_no_spans(trained: Path, corpus: tuple[list, list]) -> None:
    from clinideid.document import Document

    _, dev = corpus
    detector = NeuralDetector(trained)
    found = detector.detect([Document("empty", ""), dev[0], Document("blank", " \n\t ")])
    assert found[0] == [] and found[2] == [] and len(found[1]) > 0
