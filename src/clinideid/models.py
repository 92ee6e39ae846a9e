"""Model artifacts: a directory holding the weights and a ``model.json`` describing them.

Every learned detector (the CRF now, neural taggers later) saves and loads through this module, so a
model always travels with what is needed to use it safely: the format version, the model type, the label
scheme (BIO/BIOES) and label list, the training configuration, what it was trained on and under which
licence, the package versions used, the dev metrics, the creation time and the seed. Loading checks the
format version, the model type and the label scheme, and fails with a ``ModelError`` that names the field
that does not match and says how to fix it.

A model is named either by a directory path or by the name of a model shipped with clinideid
(``src/clinideid/models/<name>/``, e.g. ``"es-meddocan-crf"``).
"""

from __future__ import annotations

import gzip
import json
import platform
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clinideid.errors import ModelError

#: version of the artifact layout written by this module; bump it when the layout changes
FORMAT_VERSION = 1
METADATA_FILE = "model.json"
PACKAGED_DIR = Path(__file__).resolve().parent / "models"


class TrainingData(BaseModel):
    """What a model was trained on (never the data itself)."""

    model_config = ConfigDict(extra="allow")

    description: str = ""
    licence: str = ""
    documents: int = 0
    spans: int = 0


class ModelMetadata(BaseModel):
    """The content of ``model.json``."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    format_version: int
    model_type: str
    name: str
    weights: str = Field(description="weights file name inside the model directory")
    weights_compression: str | None = None
    label_scheme: str = Field(description="token tagging scheme, e.g. BIO or BIOES")
    labels: list[str] = Field(description="entity labels the model predicts")
    label_set: str = Field(
        "canonical", description="'canonical', or the name of the native scheme the labels come from"
    )
    language: str | None = None
    training_config: dict[str, Any] = Field(default_factory=dict)
    training_data: TrainingData = Field(default_factory=TrainingData)
    versions: dict[str, str] = Field(default_factory=dict)
    dev_metrics: dict[str, Any] = Field(default_factory=dict)
    created: str = ""
    seed: int | None = None
    resources: dict[str, str] = Field(
        default_factory=dict, description="fingerprints of the word lists used as features"
    )


def package_versions(*packages: str) -> dict[str, str]:
    """Versions of clinideid, python and ``packages`` (``"not installed"`` when missing)."""
    out = {"python": platform.python_version()}
    for pkg in ("clinideid", *packages):
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def packaged_models() -> list[str]:
    """Names of the models shipped with clinideid."""
    if not PACKAGED_DIR.is_dir():
        return []
    return sorted(p.name for p in PACKAGED_DIR.iterdir() if (p / METADATA_FILE).is_file())


def resolve_model_path(name_or_path: str | Path) -> Path:
    """The directory of a model given by path or by packaged name."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    key = str(name_or_path)
    if "/" not in key and "\\" not in key and (PACKAGED_DIR / key).is_dir():
        return PACKAGED_DIR / key
    shipped = ", ".join(packaged_models()) or "none"
    raise ModelError(
        f"model {key!r} not found: give the path of a model directory or the name of a shipped model "
        f"(shipped: {shipped})"
    )


def save_model(
    directory: str | Path,
    metadata: ModelMetadata,
    weights: bytes,
    *,
    compress: bool = True,
    extra_files: Mapping[str, bytes | str] | None = None,
) -> Path:
    """Write ``weights`` (gzip-compressed when ``compress``) and ``model.json`` into ``directory``.

    ``metadata.weights`` is set to the file actually written. ``extra_files`` (e.g. ``metrics.json``) are
    written next to them.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(metadata.weights or "model.bin").name.removesuffix(".gz")
    name = f"{stem}.gz" if compress else stem
    data = gzip.compress(weights, compresslevel=9, mtime=0) if compress else weights
    (out / name).write_bytes(data)
    meta = metadata.model_copy(update={"weights": name, "weights_compression": "gzip" if compress else None})
    if not meta.created:
        meta = meta.model_copy(update={"created": now_iso()})
    (out / METADATA_FILE).write_text(
        json.dumps(meta.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for fname, content in (extra_files or {}).items():
        target = out / fname
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return out


def load_metadata(
    directory: str | Path,
    *,
    model_type: str | None = None,
    label_schemes: Iterable[str] | None = None,
) -> ModelMetadata:
    """Read and check ``model.json``: format version, and when given, model type and label scheme."""
    path = Path(directory)
    meta_path = path / METADATA_FILE
    if not path.is_dir():
        raise ModelError(f"model directory {path} does not exist")
    if not meta_path.is_file():
        raise ModelError(
            f"{path} is not a clinideid model directory: {METADATA_FILE} is missing (train one with "
            "`clinideid train` or give the directory that contains model.json)"
        )
    try:
        raw = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(
            f"{meta_path} is not readable JSON ({type(exc).__name__}); the model is corrupt"
        ) from None
    if not isinstance(raw, dict):
        raise ModelError(f"{meta_path} must hold a JSON object; the model is corrupt")
    version = raw.get("format_version")
    if not isinstance(version, int):
        raise ModelError(f"{meta_path}: field 'format_version' is missing or not an integer")
    if version > FORMAT_VERSION:
        raise ModelError(
            f"{meta_path}: field 'format_version' is {version}, newer than this clinideid supports "
            f"({FORMAT_VERSION}); upgrade clinideid to load this model"
        )
    if version < FORMAT_VERSION:
        raise ModelError(
            f"{meta_path}: field 'format_version' is {version}, older than this clinideid supports "
            f"({FORMAT_VERSION}); re-train the model with `clinideid train`"
        )
    try:
        meta = ModelMetadata.model_validate(raw)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in err["loc"]) + f" ({err['msg']})" for err in exc.errors())
        raise ModelError(f"{meta_path}: invalid metadata: {fields}") from None
    if model_type is not None and meta.model_type != model_type:
        raise ModelError(
            f"{meta_path}: field 'model_type' is {meta.model_type!r} but a {model_type!r} model is needed; "
            f"use the detector type that matches {meta.model_type!r} models or give a {model_type!r} model"
        )
    if label_schemes is not None:
        schemes = list(label_schemes)
        if meta.label_scheme not in schemes:
            raise ModelError(
                f"{meta_path}: field 'label_scheme' is {meta.label_scheme!r}, which this detector cannot "
                f"decode (supported: {', '.join(schemes)}); re-train with one of them"
            )
    if not meta.labels:
        raise ModelError(f"{meta_path}: field 'labels' is empty; the model predicts nothing")
    return meta


def read_weights(directory: str | Path, meta: ModelMetadata) -> bytes:
    """The (decompressed) bytes of the weights file named in the metadata."""
    path = Path(directory) / meta.weights
    if Path(meta.weights).name != meta.weights:
        raise ModelError(f"{Path(directory) / METADATA_FILE}: field 'weights' must be a plain file name")
    if not path.is_file():
        raise ModelError(
            f"weights file {path} named in {METADATA_FILE} is missing; copy the whole model directory"
        )
    data = path.read_bytes()
    if meta.weights_compression == "gzip":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ModelError(f"weights file {path} is not valid gzip ({exc}); the model is corrupt") from None
    if meta.weights_compression not in (None, ""):
        raise ModelError(
            f"{Path(directory) / METADATA_FILE}: field 'weights_compression' is "
            f"{meta.weights_compression!r}; supported: gzip or none"
        )
    return data
