"""Continued training from another model: vocabularies and tags extended, weights carried over, labels mapped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.tagger import NeuralModel
from clinideid.detect.neural.vocab import Vocab
from clinideid.document import Document, relabel
from clinideid.errors import ConfigError
from clinideid.train.config import parse_train_config
from clinideid.train.neural import build_vocabs, tag_set, train_neural
from clinideid.train.transfer import continued_config, extend_vocab, extend_vocabs, transfer_weights
from crf_fixtures import make_corpus

SOURCE_CONFIG = {
    "model": "neural",
    "window_size": 40,
    "window_overlap": 8,
    "neural": {
        "optimizer": "adam",
        "lr": 0.01,
        "epochs": 5,
        "batch_size": 4,
        "threads": 1,
        "lstm_hidden": 24,
    },
}


def _target_corpus(n: int, seed: int, prefix: str) -> list[Document]:
    """Another 'language': new words around the entities and CITY annotated as HOSPITAL (a new label)."""
    out = []
    for doc in make_corpus(n, seed=seed, prefix=prefix):
        # same-length replacements keep every span's offsets
        text = doc.text.replace("Paciente de", "Patiente de").replace("que vive en", "habite à la")
        text = text.replace("Médico: Dr.", "Docteur: Dr")
        out.append(
            relabel(
                Document(doc.id, text, "fr", spans=doc.spans),
                lambda label: "HOSPITAL" if label == "CITY" else label,
            )
        )
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("source") / "m"
    train_neural(
        make_corpus(20, seed=1),
        make_corpus(6, seed=2, prefix="d"),
        parse_train_config(SOURCE_CONFIG),
        out_dir=out,
        name="source",
        seed=1,
        language="es",
    )
    return out


def test_the_target_fixture_is_valid() -> None:
    doc = _target_corpus(1, 5, "t")[0]
    assert {s.label for s in doc.spans} >= {"HOSPITAL", "DOCTOR"}
    assert all(doc.text[s.start : s.end] == s.text for s in doc.spans)


def test_extended_vocab_keeps_every_source_id() -> None:
    src = Vocab(["a", "b", "c"])
    ext = extend_vocab(src, Vocab(["c", "d", "a", "e"]))
    assert ext.to_list() == ["a", "b", "c", "d", "e"]
    assert all(ext.get(x) == src.get(x) for x in ("a", "b", "c"))


def test_transferred_weights_fill_the_leading_slices(source: Path) -> None:
    src = NeuralModel.load(source)
    target_docs = _target_corpus(4, 3, "t")
    tokens = [[t for t in d.text.split()] for d in target_docs]
    labels = sorted(set(src.metadata.labels) | {"HOSPITAL"})
    new = build_vocabs(tokens, src.config, tag_set(labels, "BIOES"))
    vocabs = extend_vocabs(src.vocabs, new)
    assert vocabs.tags[: len(src.vocabs.tags)] == src.vocabs.tags and "B-HOSPITAL" in vocabs.tags
    assert len(vocabs.words) > len(src.vocabs.words)
    target = NeuralModel(src.config, vocabs, window_size=40, window_overlap=8)
    assert transfer_weights(src, target) == len(src.module.state_dict())
    s_state, t_state = src.module.state_dict(), target.module.state_dict()
    for name, tensor in s_state.items():
        assert torch.equal(t_state[name][tuple(slice(0, n) for n in tensor.shape)], tensor), name
    n_words = len(src.vocabs.words)
    assert not torch.equal(
        t_state["word.embed.weight"][n_words:], torch.zeros_like(t_state["word.embed.weight"][n_words:])
    )


def test_continued_training_starts_from_the_source(source: Path, tmp_path: Path) -> None:
    """A near-zero learning rate leaves the source's knowledge intact: it still tags the source's corpus."""
    frozen = parse_train_config(
        {**SOURCE_CONFIG, "neural": {**SOURCE_CONFIG["neural"], "lr": 1e-9, "epochs": 1}}
    )
    docs = make_corpus(6, seed=2, prefix="d")
    result = train_neural(docs, docs, frozen, out_dir=tmp_path / "c", name="c", init_from=source)
    src_f1 = json.loads((source / "model.json").read_text())["dev_metrics"]["strict"]["f1"]
    assert result.dev_report["strict"].micro.f1 == pytest.approx(src_f1, abs=0.02)
    meta = json.loads((tmp_path / "c" / "model.json").read_text())
    assert meta["training_config"]["init_from"]["name"] == "source"


def test_source_then_target_learns_the_new_label(source: Path, tmp_path: Path) -> None:
    cfg = parse_train_config({**SOURCE_CONFIG, "neural": {**SOURCE_CONFIG["neural"], "epochs": 4}})
    result = train_neural(
        _target_corpus(20, 3, "t"),
        _target_corpus(6, 4, "v"),
        cfg,
        out_dir=tmp_path / "t",
        name="t",
        init_from=source,
        language="fr",
    )
    model = NeuralModel.load(tmp_path / "t")
    assert "HOSPITAL" in model.metadata.labels and "CITY" in model.metadata.labels
    assert result.dev_report["strict"].micro.f1 > 0.8


def test_continued_config_keeps_the_source_network() -> None:
    src = NeuralConfig(lstm_hidden=24, affix=True)
    tgt = NeuralConfig(lstm_hidden=64, lr=0.001, epochs=3)
    merged = continued_config(src, tgt)
    assert merged.lstm_hidden == 24 and merged.affix and merged.lr == 0.001 and merged.epochs == 3
    with pytest.raises(ValueError, match="token-local"):
        continued_config(src, NeuralConfig(cvt=True))


def test_incompatible_sources_are_config_errors(source: Path, tmp_path: Path) -> None:
    docs = make_corpus(3, seed=2)
    bio = parse_train_config({**SOURCE_CONFIG, "label_scheme": "BIO"})
    with pytest.raises(ConfigError, match="BIOES"):
        train_neural(docs, docs, bio, out_dir=tmp_path / "a", name="a", init_from=source)
    with pytest.raises(ConfigError, match="label set"):
        train_neural(
            docs,
            docs,
            parse_train_config(SOURCE_CONFIG),
            out_dir=tmp_path / "b",
            name="b",
            init_from=source,
            label_set="meddocan",
        )
