"""The CRF models shipped with clinideid load, are described completely, and find PHI in crafted notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinideid.detect.base import build_detector
from clinideid.detect.crf import CRFDetector
from clinideid.document import Document
from clinideid.labels import canonical
from clinideid.models import load_metadata, packaged_models, resolve_model_path

SHIPPED = {"es-meddocan-crf": ("es", "CC BY 4.0"), "fr-edspseudo-crf": ("fr", "BSD-3-Clause")}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_model_metadata(name):
    assert name in packaged_models()
    path = resolve_model_path(name)
    meta = load_metadata(path, model_type="crf", label_schemes=("BIO", "BIOES"))
    language, licence = SHIPPED[name]
    assert meta.language == language and meta.training_data.licence == licence
    assert meta.label_set == "canonical" and all(label in canonical() for label in meta.labels)
    assert meta.dev_metrics["strict"]["f1"] > 0.9
    assert meta.weights_compression == "gzip" and (path / "metrics.json").is_file()
    assert sum(p.stat().st_size for p in path.iterdir()) < 3_000_000  # compact


def _found(detector, text: str) -> set[tuple[str, str]]:
    doc = Document("note", text)
    return {(text[s.start : s.end], s.label) for s in detector.detect_one(doc)}


def test_spanish_model_on_a_crafted_form():
    det = build_detector({"type": "crf", "model": "es-meddocan-crf"})
    text = (
        "Datos del paciente.\nNombre: Ernesto.\nApellidos: Rivera Bueno.\nNHC: 368503.\n"
        "Fecha de Ingreso: 12/12/2016.\nEdad: 70 años Sexo: H.\n"
    )
    found = _found(det, text)
    assert {("Ernesto", "PATIENT"), ("Rivera Bueno", "PATIENT"), ("368503", "MEDICALRECORD")} <= found
    assert ("12/12/2016", "DATE") in found and ("70 años", "AGE") in found


def test_french_model_on_a_crafted_snippet():
    det = CRFDetector("fr-edspseudo-crf")
    found = _found(det, "Internes : DUPONT Christine (Interne) 18/02/2019 16:34\nTél : 01 23 45 67 89")
    labels = {label for _, label in found}
    assert ("18/02/2019", "DATE") in found
    assert "PERSON" in labels and "PHONE" in labels


CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPORA / "meddocan" / "dev").is_dir(), reason="shared corpora not available")
def test_spanish_model_scores_on_meddocan_dev():
    from clinideid.train import evaluate_model

    report = evaluate_model("es-meddocan-crf", CORPORA / "meddocan" / "dev", "brat", "meddocan")
    assert report["strict"].micro.f1 >= 0.95
    assert report["token_binary"].micro.recall >= 0.97


def test_french_model_tags_text_with_lone_surrogates():
    # "\ud800" comes from a JSON "\ud800" escape; CRFsuite takes UTF-8 features and used to raise SystemError
    det = CRFDetector("fr-edspseudo-crf")
    text = "\udc00Internes : DUPONT Christine \ud800(Interne) 18/02/2019 16:34\nTél : 01 23 45 67 89 \ud83d"
    spans = det.detect_one(Document("note", text, language="fr"))
    found = {(text[s.start : s.end], s.label) for s in spans}
    assert ("18/02/2019", "DATE") in found and ("Christine", "PERSON") in found
    clean = det.detect_one(Document("note", text.replace("\ud800", " ").replace("\udc00", " ")))
    assert {s.key() for s in spans if s.label == "DATE"} == {s.key() for s in clean if s.label == "DATE"}
