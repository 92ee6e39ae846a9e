"""The neural tagger shipped with clinideid: complete metadata, compact, finds PHI, scores on MEDDOCAN dev."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinideid.detect.base import build_detector
from clinideid.document import Document
from clinideid.labels import canonical
from clinideid.models import load_metadata, packaged_models, resolve_model_path

NAME = "es-meddocan-neural"


def test_shipped_neural_model_metadata() -> None:
    assert NAME in packaged_models()
    path = resolve_model_path(NAME)
    meta = load_metadata(path, model_type="neural", label_schemes=("BIOES",))
    assert meta.language == "es" and meta.training_data.licence == "CC BY 4.0"
    assert meta.label_set == "canonical" and all(label in canonical() for label in meta.labels)
    assert meta.dev_metrics["strict"]["f1"] > 0.95
    assert meta.training_config["neural"]["rules"] == {"type": "rules", "language": "es"}
    assert sum(p.stat().st_size for p in path.iterdir()) < 6_000_000  # compact (float16 weights)


def test_shipped_neural_model_on_a_crafted_note() -> None:
    det = build_detector({"type": "neural", "model": NAME})
    text = (
        "Datos del paciente.\nNombre: Ernesto.\nApellidos: Rivera Bueno.\nNHC: 368503.\n"
        "Fecha de Ingreso: 12/12/2016.\nEdad: 70 años Sexo: H.\n"
        "Paciente de 70 años remitido desde el Hospital Clínico San Carlos por el Dr. Luis Pérez.\n"
    )
    found = {(text[s.start : s.end], s.label) for s in det.detect_one(Document("note", text))}
    assert {("Ernesto", "PATIENT"), ("Rivera Bueno", "PATIENT"), ("368503", "MEDICALRECORD")} <= found
    assert ("12/12/2016", "DATE") in found
    assert any(label == "DOCTOR" and "Pérez" in span for span, label in found)


def test_the_spanish_default_pipeline_uses_it() -> None:
    from clinideid.config import default_config

    detectors = default_config("es").model_dump()["detectors"]
    assert any(m.get("model") == NAME for d in detectors for m in d.get("models", []))


CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPORA / "meddocan" / "dev").is_dir(), reason="shared corpora not available")
def test_shipped_neural_model_scores_on_meddocan_dev() -> None:
    from clinideid.train import evaluate_model

    report = evaluate_model(NAME, CORPORA / "meddocan" / "dev", "brat", "meddocan")
    assert report["strict"].micro.f1 >= 0.955
    assert report["token_binary"].micro.recall >= 0.98
