"""The Spanish pack on a crafted clinical note (and, when the corpus is there, on MEDDOCAN dev)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document

NOTE = """Datos del paciente.
Nombre:  Lucía.
Apellidos: Fernández Arroyo.
NHC: 4471203.
NASS: 28 55102934 17.
Domicilio: Avda. de la Constitución 45, 3º B.
Localidad/ Provincia: Sevilla.
CP: 41001.
Datos asistenciales.
Fecha de nacimiento: 21/07/1958.
País: España.
Edad: 65 años Sexo: M.
Fecha de Ingreso: 04/10/2023.
Médico: Tomás Iglesias Ruiz NºCol: 41 41 55012.
Informe clínico del paciente: Mujer de 65 años con enfermedad de Parkinson y síndrome de Sjögren, que
ingresa en el Hospital Universitario Virgen Macarena por disnea. En marzo de 2021 fue intervenida.
La Sra. Fernández refiere que su hija la acompaña; teléfono de contacto 654 321 987.
DNI 12345678Z. Control el 15 de noviembre de 2023.
Remitido por: Dr. Tomás Iglesias Ruiz. Servicio de Neumología. Hospital Universitario Virgen Macarena.
C/ Dr. Fedriani 3, 41009 Sevilla (España). E-mail: tiglesias@hospital.es
"""


@pytest.fixture(scope="module")
def spans():
    doc = Document("nota", NOTE, language="es")
    return [(s.label, s.text) for s in RuleDetector(language="es").detect_one(doc)]


@pytest.mark.parametrize(
    "expected",
    [
        ("PATIENT", "Lucía"),
        ("PATIENT", "Fernández Arroyo"),
        ("PATIENT", "Fernández"),  # "La Sra. Fernández", found again by propagation
        ("MEDICALRECORD", "4471203"),
        ("HEALTHPLAN", "28 55102934 17"),
        ("STREET", "Avda. de la Constitución 45, 3º B"),
        ("CITY", "Sevilla"),
        ("ZIP", "41001"),
        ("DATE", "21/07/1958"),
        ("COUNTRY", "España"),
        ("AGE", "65 años"),
        ("SEX", "M"),
        ("DATE", "04/10/2023"),
        ("DOCTOR", "Tomás Iglesias Ruiz"),
        ("LICENSE", "41 41 55012"),
        ("HOSPITAL", "Hospital Universitario Virgen Macarena"),
        ("DATE", "marzo de 2021"),
        ("PHONE", "654 321 987"),
        ("IDNUM", "12345678Z"),
        ("DATE", "15 de noviembre de 2023"),
        ("STREET", "C/ Dr. Fedriani 3"),
        ("ZIP", "41009"),
        ("EMAIL", "tiglesias@hospital.es"),
    ],
)
def test_spanish_note(spans, expected):
    assert expected in spans


def test_spanish_note_leaves_medical_terms(spans):
    texts = {t for _, t in spans}
    assert not {"Parkinson", "Sjögren", "Neumología", "Servicio de Neumología"} & texts
    assert not any("disnea" in t for t in texts)


CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPUS / "meddocan" / "dev").is_dir(), reason="needs ../shared/corpora/meddocan")
def test_meddocan_dev_token_recall_and_precision():
    import clinideid.formats.brat  # noqa: F401  (registers the codec)
    from clinideid.evaluate.evaluator import evaluate
    from clinideid.formats import ReadReport, read_corpus

    gold = read_corpus(CORPUS / "meddocan" / "dev", "brat", report=ReadReport())
    found = RuleDetector(language="es").detect(gold)
    system = [d.with_spans(s) for d, s in zip(gold, found, strict=True)]
    result = evaluate(gold, system, level="binary", modes=["token_binary"], scheme="meddocan")
    micro = result.results["token_binary"].micro
    assert micro.recall >= 0.95 and micro.precision >= 0.85
