"""Rule spans as token inputs of the neural tagger (the hybrid neural model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.tagger import NeuralModel, collate
from clinideid.detect.neural.token_features import RuleMarks, rule_mark_names
from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus

RULES = {"type": "rules", "language": "es"}


def test_rule_marks_put_b_and_i_on_the_span_tokens() -> None:
    doc = Document("d", "Ingresa el 12 de marzo de 2019 por fiebre.")
    tokens = tokenize(doc.text)
    feats = RuleMarks(RULES).features(doc, tokens)
    names = rule_mark_names()
    assert feats.shape == (len(tokens), len(names))
    on = {(tokens[i].text, names[j]) for i, j in feats.nonzero().tolist()}
    assert ("12", "B-DATE") in on and ("2019", "I-DATE") in on
    assert not feats[0].any() and not feats[-1].any()  # "Ingresa", "."
    assert feats.sum(1).max() >= 1


def test_rule_marks_of_an_empty_document() -> None:
    assert RuleMarks(RULES).features(Document("e", ""), []).shape == (0, len(rule_mark_names()))


def test_the_input_size_follows_the_canonical_labels_not_the_rules() -> None:
    assert RuleMarks(RULES).dim == RuleMarks({"type": "rules", "language": "en"}).dim


def test_rules_true_needs_a_language(tmp_path: Path) -> None:
    cfg = parse_train_config({"model": "neural", "neural": {"rules": True, "epochs": 1}})
    with pytest.raises(ConfigError, match="language"):
        train_neural(make_corpus(3, seed=1), make_corpus(2, seed=2), cfg, out_dir=tmp_path / "m", name="x")
    with pytest.raises(ConfigError, match="language"):
        NeuralModel(NeuralConfig(rules=True), vocabs=None)  # type: ignore[arg-type]


def test_a_network_with_features_refuses_a_batch_without_them(tmp_path: Path) -> None:
    cfg = parse_train_config(
        {"model": "neural", "window_size": 30, "neural": {"rules": True, "epochs": 1, "threads": 1}}
    )
    train_neural(
        make_corpus(4, seed=1), make_corpus(2, seed=2), cfg, out_dir=tmp_path / "m", name="x", language="es"
    )
    model = NeuralModel.load(tmp_path / "m")
    doc = make_corpus(1, seed=5)[0]
    _, examples = model.encode_document(doc, tokenize(doc.text))
    batch = collate(examples)
    assert batch.features is not None and batch.features.shape[2] == len(rule_mark_names())
    batch.features = None
    with pytest.raises(ValueError, match="token features"):
        model.module.emissions(batch)


@pytest.fixture(scope="module")
def hybrid_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("neural_rules") / "m"
    cfg = parse_train_config(
        {
            "model": "neural",
            "window_size": 40,
            "window_overlap": 8,
            "neural": {
                "rules": True,
                "optimizer": "adam",
                "lr": 0.01,
                "epochs": 6,
                "batch_size": 4,
                "threads": 1,
            },
        }
    )
    train_neural(
        make_corpus(30, seed=1),
        make_corpus(8, seed=2, prefix="dev"),
        cfg,
        out_dir=out,
        name="h",
        seed=2,
        language="es",
    )
    return out


def test_the_resolved_rule_spec_is_saved_and_reloaded(hybrid_model: Path) -> None:
    meta = json.loads((hybrid_model / "model.json").read_text(encoding="utf-8"))
    assert meta["training_config"]["neural"]["rules"] == RULES
    model = NeuralModel.load(hybrid_model)
    assert model.config.rules == RULES and model.module.n_features == len(rule_mark_names())
    assert meta["dev_metrics"]["strict"]["f1"] >= 0.9


def test_hybrid_model_save_load_identical(hybrid_model: Path) -> None:
    a = NeuralModel.load(hybrid_model)
    b = NeuralModel.from_bytes(a.to_bytes(), a.config, metadata=a.metadata, window_size=40, window_overlap=8)
    docs = make_corpus(3, seed=9, prefix="x")
    with torch.inference_mode():
        assert [t[1] for t in a.tag_documents(docs)] == [t[1] for t in b.tag_documents(docs)]


def test_prepared_documents_tag_like_raw_ones(hybrid_model: Path) -> None:
    """Training tags its dev set from features computed once; that must not change any prediction."""
    model = NeuralModel.load(hybrid_model)
    docs = make_corpus(4, seed=11, prefix="p")
    prepared = model.prepare(docs)
    assert len(prepared.tokens) == len(prepared.features) == 4
    assert all(
        f is not None and f.shape[0] == len(t)
        for f, t in zip(prepared.features, prepared.tokens, strict=True)
    )
    raw = model.predict_spans(docs)
    for _ in range(2):  # prepared documents can be tagged again and again
        again = model.predict_spans(prepared)
        assert [[(s.start, s.end, s.label) for s in d] for d in again] == [
            [(s.start, s.end, s.label) for s in d] for d in raw
        ]
