"""Model artifact directories: save/load, metadata, and clear errors for incompatible or broken models."""

from __future__ import annotations

import json

import pytest

from clinideid.errors import ModelError
from clinideid.models import (
    FORMAT_VERSION,
    METADATA_FILE,
    ModelMetadata,
    load_metadata,
    package_versions,
    packaged_models,
    read_weights,
    resolve_model_path,
    save_model,
)


def _meta(**changes) -> ModelMetadata:
    base = {
        "format_version": FORMAT_VERSION,
        "model_type": "crf",
        "name": "tiny",
        "weights": "model.crfsuite",
        "label_scheme": "BIOES",
        "labels": ["DATE", "PATIENT"],
        "training_data": {"description": "generated", "licence": "CC0", "documents": 3, "spans": 9},
        "versions": package_versions("python-crfsuite"),
        "seed": 7,
    }
    base.update(changes)
    return ModelMetadata.model_validate(base)


@pytest.mark.parametrize("compress", [True, False])
def test_save_and_load_round_trip(tmp_path, compress):
    weights = b"\x00\x01weights" * 100
    out = save_model(tmp_path / "m", _meta(), weights, compress=compress, extra_files={"metrics.json": "{}"})
    meta = load_metadata(out, model_type="crf", label_schemes=("BIO", "BIOES"))
    assert meta.name == "tiny" and meta.seed == 7 and meta.labels == ["DATE", "PATIENT"]
    assert meta.weights == ("model.crfsuite.gz" if compress else "model.crfsuite")
    assert meta.created  # set on save
    assert meta.training_data.licence == "CC0"
    assert {"python", "clinideid", "python-crfsuite"} <= set(meta.versions)
    assert read_weights(out, meta) == weights
    assert (out / "metrics.json").read_text() == "{}"


def _write_raw(path, **changes):
    save_model(path, _meta(), b"w")
    raw = json.loads((path / METADATA_FILE).read_text())
    raw.update(changes)
    (path / METADATA_FILE).write_text(json.dumps(raw))


def test_newer_format_version_says_upgrade(tmp_path):
    _write_raw(tmp_path, format_version=FORMAT_VERSION + 1)
    with pytest.raises(ModelError, match=r"'format_version'.*upgrade clinideid"):
        load_metadata(tmp_path)


def test_older_format_version_says_retrain(tmp_path):
    _write_raw(tmp_path, format_version=0)
    with pytest.raises(ModelError, match=r"'format_version'.*re-train"):
        load_metadata(tmp_path)


def test_missing_format_version(tmp_path):
    _write_raw(tmp_path, format_version="one")
    with pytest.raises(ModelError, match="format_version"):
        load_metadata(tmp_path)


def test_wrong_model_type(tmp_path):
    _write_raw(tmp_path, model_type="bilstm")
    with pytest.raises(ModelError, match=r"'model_type' is 'bilstm' but a 'crf' model is needed"):
        load_metadata(tmp_path, model_type="crf")


def test_wrong_label_scheme(tmp_path):
    _write_raw(tmp_path, label_scheme="IOB1")
    with pytest.raises(ModelError, match=r"'label_scheme' is 'IOB1'.*supported: BIO, BIOES"):
        load_metadata(tmp_path, label_schemes=("BIO", "BIOES"))


def test_invalid_metadata_names_the_field(tmp_path):
    _write_raw(tmp_path, labels="DATE")
    with pytest.raises(ModelError, match="invalid metadata: labels"):
        load_metadata(tmp_path)
    _write_raw(tmp_path, labels=[])
    with pytest.raises(ModelError, match="'labels' is empty"):
        load_metadata(tmp_path)


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        load_metadata(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match=r"model.json is missing"):
        load_metadata(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / METADATA_FILE).write_text("{not json")
    with pytest.raises(ModelError, match="not readable JSON"):
        load_metadata(bad)
    (bad / METADATA_FILE).write_text("[1, 2]")
    with pytest.raises(ModelError, match="JSON object"):
        load_metadata(bad)

    m = tmp_path / "m"
    save_model(m, _meta(), b"weights")
    meta = load_metadata(m)
    (m / meta.weights).unlink()
    with pytest.raises(ModelError, match=r"weights file .* is missing"):
        read_weights(m, meta)
    (m / meta.weights).write_bytes(b"not gzip")
    with pytest.raises(ModelError, match="not valid gzip"):
        read_weights(m, meta)
    with pytest.raises(ModelError, match="plain file name"):
        read_weights(m, meta.model_copy(update={"weights": "../elsewhere.bin"}))
    with pytest.raises(ModelError, match="weights_compression"):
        read_weights(m, meta.model_copy(update={"weights_compression": "zstd"}))


def test_resolve_model_path(tmp_path):
    assert resolve_model_path(tmp_path) == tmp_path
    with pytest.raises(ModelError, match=r"not found.*shipped"):
        resolve_model_path("no-such-model")
    for name in packaged_models():
        assert (resolve_model_path(name) / METADATA_FILE).is_file()
