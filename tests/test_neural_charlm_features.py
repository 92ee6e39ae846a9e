"""Contextual string embeddings as inputs of the neural tagger: layout, projection, self-contained models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from clinideid.detect.neural.config import NeuralConfig
from clinideid.detect.neural.tagger import NeuralModel
from clinideid.document import Document
from clinideid.lm.charlm import CharLM, CharLMConfig, CharVocab
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.neural import train_neural
from crf_fixtures import make_corpus


@pytest.fixture(scope="module")
def lms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two tiny random character LMs (forward, backward) saved as model directories."""
    root = tmp_path_factory.mktemp("charlm")
    vocab = CharVocab.build([d.text for d in make_corpus(10, seed=1)])
    torch.manual_seed(0)
    paths = {}
    for direction in ("forward", "backward"):
        lm = CharLM(vocab, CharLMConfig(embedding_dim=8, hidden_size=12), direction)
        paths[direction] = str(lm.save(root / direction))
    return paths


def _config(lms: dict[str, str], **neural: object) -> dict:
    return {
        "model": "neural",
        "window_size": 40,
        "window_overlap": 8,
        "neural": {"charlm": lms, "epochs": 3, "batch_size": 4, "lr": 0.01, "threads": 1, **neural},
    }


def test_charlm_features_are_the_lm_states_of_each_token(lms: dict[str, str]) -> None:
    model = NeuralModel(NeuralConfig(charlm=lms), vocabs=_tiny_vocabs())
    doc = Document("d", "Nombre: Ana Ruiz.")
    tokens = tokenize(doc.text)
    feats = model.document_features(doc, tokens)
    assert feats is not None and feats.shape == (len(tokens), 24)
    embedder = model.featurizers[0].embedder  # type: ignore[attr-defined]
    assert torch.allclose(feats, embedder.token_embeddings(doc.text, tokens))
    batch = model.documents_features(
        [doc, Document("e", "Otro texto más largo aquí.")], [tokens, tokenize("Otro texto más largo aquí.")]
    )
    assert torch.allclose(batch[0], feats, atol=1e-6)  # batching documents changes nothing


def _tiny_vocabs():
    from clinideid.detect.neural.tagger import Vocabs
    from clinideid.detect.neural.vocab import Vocab

    return Vocabs(Vocab(["nombre"]), Vocab(list("abc")), Vocab(), Vocab(), ["O", "B-PATIENT", "I-PATIENT"])


def test_projection_layer_sizes(lms: dict[str, str]) -> None:
    plain = NeuralModel(NeuralConfig(charlm=lms), vocabs=_tiny_vocabs())
    proj = NeuralModel(NeuralConfig(charlm=lms, charlm_proj=5), vocabs=_tiny_vocabs())
    assert plain.module.charlm_proj is None and proj.module.charlm_proj is not None
    assert proj.module.charlm_proj.in_features == 24 and proj.module.charlm_proj.out_features == 5
    assert plain.module.lstm.input_size - proj.module.lstm.input_size == 24 - 5


def test_a_trained_model_carries_its_lms(lms: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "m"
    train_neural(
        make_corpus(12, seed=1),
        make_corpus(4, seed=2, prefix="d"),
        parse_train_config(_config(lms, charlm_proj=8)),
        out_dir=out,
        name="lm",
        language="es",
    )
    meta = json.loads((out / "model.json").read_text())
    assert meta["training_config"]["neural"]["charlm"] == {
        "forward": "charlm/forward",
        "backward": "charlm/backward",
    }
    assert (out / "charlm" / "forward" / "model.json").is_file() and (out / "charlm" / "backward").is_dir()
    moved = tmp_path / "elsewhere"
    out.rename(moved)  # the model works wherever it is copied, without the original LM folders
    model = NeuralModel.load(moved)
    docs = make_corpus(2, seed=7, prefix="x")
    again = NeuralModel.from_bytes(
        model.to_bytes(), model.config, metadata=model.metadata, base=moved, window_size=40, window_overlap=8
    )
    with torch.inference_mode():
        assert [t[1] for t in model.tag_documents(docs)] == [t[1] for t in again.tag_documents(docs)]


def test_continued_training_from_a_charlm_model(lms: dict[str, str], tmp_path: Path) -> None:
    train_neural(
        make_corpus(8, seed=1),
        make_corpus(3, seed=2, prefix="d"),
        parse_train_config(_config(lms, epochs=1)),
        out_dir=tmp_path / "src",
        name="src",
        language="es",
    )
    result = train_neural(
        make_corpus(8, seed=3),
        make_corpus(3, seed=4, prefix="d"),
        parse_train_config(_config(lms, epochs=1)),
        out_dir=tmp_path / "tgt",
        name="tgt",
        language="es",
        init_from=tmp_path / "src",
    )
    assert (result.model_dir / "charlm" / "backward" / "model.json").is_file()


def test_charlm_config_checks(lms: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="forward and backward"):
        NeuralConfig(charlm={"forward": lms["forward"]})
    with pytest.raises(ValueError, match="keeps the two LMs apart"):
        NeuralConfig(charlm=lms, cvt=True, charlm_proj=8)
