"""Character vocabulary, the character LM network, and its model directory (save, load, broken files)."""

from __future__ import annotations

import gzip
import io
import json

import pytest
import torch

from clinideid.errors import ConfigError, ModelError
from clinideid.lm.charlm import CharLM, CharLMConfig, CharVocab, layout_streams
from clinideid.models import METADATA_FILE
from lm_fixtures import generated_notes, one_torch_thread, tiny_lm


@pytest.fixture(autouse=True)
def _one_thread():
    with one_torch_thread():
        yield


def test_vocab_keeps_frequent_characters_after_the_specials():
    vocab = CharVocab.build(["aab", "ac\n"], min_count=2)
    assert vocab.to_list() == ["a"]
    assert len(vocab) == 4 and vocab.SPECIALS == ("<pad>", "<unk>", "<boundary>")
    assert vocab.encode("abz") == [3, CharVocab.UNK, CharVocab.UNK]
    assert CharVocab.build(["ba\n"]).to_list() == ["\n", "a", "b"]  # code point order, deterministic
    with pytest.raises(ConfigError):
        CharVocab.build(["a"], min_count=0)


def test_vocab_rejects_broken_entries():
    with pytest.raises(ModelError):
        CharVocab(["ab"])
    with pytest.raises(ModelError):
        CharVocab(["a", "a"])


def test_documents_start_with_the_boundary_and_backward_reads_reversed():
    vocab = CharVocab.build(["abc"])
    fwd = CharLM(vocab, CharLMConfig(hidden_size=4), "forward")
    bwd = CharLM(vocab, CharLMConfig(hidden_size=4), "backward")
    assert fwd.encode_document("abc") == [CharVocab.BOUNDARY, 3, 4, 5]
    assert bwd.encode_document("abc") == [CharVocab.BOUNDARY, 5, 4, 3]
    with pytest.raises(ConfigError):
        CharLM(vocab, direction="both")


def test_states_row_k_is_the_state_after_k_characters():
    lm = tiny_lm("forward")
    full = lm.states("Ana de Sevilla")
    assert full.shape == (len("Ana de Sevilla") + 1, lm.hidden_size)
    torch.testing.assert_close(full[4], lm.states("Ana ")[-1])
    torch.testing.assert_close(full[0], lm.states("")[0])


def test_layout_streams_is_standard_lm_batching():
    data = layout_streams(list(range(11)), 3)
    assert data.shape == (3, 3)
    assert data[:, 0].tolist() == [0, 1, 2] and data[:, 2].tolist() == [6, 7, 8]


def test_config_limits_layers():
    with pytest.raises(ValueError):
        CharLMConfig(layers=3)


@pytest.mark.parametrize("layers", [1, 2])
def test_save_load_gives_identical_outputs(tmp_path, layers):
    lm = tiny_lm("backward", hidden=10, layers=layers)
    out = lm.save(tmp_path / "m", lm.build_metadata(name="es-test", language="es", seed=3))
    loaded = CharLM.load(out)
    assert loaded.direction == "backward" and loaded.vocab == lm.vocab and loaded.config == lm.config
    assert loaded.metadata is not None and loaded.metadata.language == "es"
    assert (
        loaded.metadata.model_type == "charlm" and loaded.metadata.training_config["direction"] == "backward"
    )
    text = generated_notes(1)[0]
    torch.testing.assert_close(loaded.states(text), lm.states(text), rtol=0, atol=0)


def test_weights_load_without_pickled_code(tmp_path):
    lm = tiny_lm("forward")
    lm.save(tmp_path / "m")
    raw = gzip.decompress((tmp_path / "m" / "charlm.pt.gz").read_bytes())
    blob = torch.load(io.BytesIO(raw), weights_only=True)
    assert set(blob) == {"state_dict", "chars", "vocab_type", "config", "direction"}


def _saved(tmp_path):
    lm = tiny_lm("forward")
    return lm.save(tmp_path / "m")


def test_missing_model_files_are_model_errors(tmp_path):
    out = _saved(tmp_path)
    (out / "charlm.pt.gz").unlink()
    with pytest.raises(ModelError, match="missing"):
        CharLM.load(out)
    (out / METADATA_FILE).unlink()
    with pytest.raises(ModelError, match=r"model\.json is missing"):
        CharLM.load(out)
    with pytest.raises(ModelError, match="not found"):
        CharLM.load(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b"not gzip"),
        lambda p: p.write_bytes(gzip.compress(b"not a torch file")),
        lambda p: p.write_bytes(p.read_bytes()[:200]),
    ],
)
def test_corrupt_weights_are_model_errors(tmp_path, damage):
    out = _saved(tmp_path)
    damage(out / "charlm.pt.gz")
    with pytest.raises(ModelError):
        CharLM.load(out)


def test_weights_of_another_shape_are_model_errors(tmp_path):
    out = _saved(tmp_path)
    other = tiny_lm("forward", hidden=7)
    (out / "charlm.pt.gz").write_bytes(gzip.compress(other.to_bytes()))
    CharLM.load(out)  # the blob carries its own config: a consistent blob still loads
    blob = torch.load(io.BytesIO(other.to_bytes()), weights_only=True)
    blob["config"]["hidden_size"] = 12
    buf = io.BytesIO()
    torch.save(blob, buf)
    (out / "charlm.pt.gz").write_bytes(gzip.compress(buf.getvalue()))
    with pytest.raises(ModelError, match="do not match"):
        CharLM.load(out)


def test_wrong_model_type_or_direction_mismatch(tmp_path):
    out = _saved(tmp_path)
    meta = json.loads((out / METADATA_FILE).read_text())
    meta["training_config"]["direction"] = "backward"
    (out / METADATA_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="inconsistent"):
        CharLM.load(out)
    meta["model_type"] = "neural"
    (out / METADATA_FILE).write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="'charlm' model is needed"):
        CharLM.load(out)
