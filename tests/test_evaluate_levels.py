"""Scoring levels, the HIPAA filter and scheme mappings, with hand-computed counts."""

from __future__ import annotations

import pytest

from clinideid.document import Document, Span
from clinideid.evaluate import LabelView, evaluate

# "Dr Jane Roe saw the 70 year old in Paris."
#  gold:   DOCTOR "Jane Roe", AGE "70",  CITY "Paris"
#  system: PATIENT "Jane Roe", DATE "70", COUNTRY "Paris"   (same offsets, every label wrong)
TEXT = "Dr Jane Roe saw the 70 year old in Paris."
JANE = (3, 11)
SEVENTY = (20, 22)
PARIS = (35, 40)
GOLD = Document("d", TEXT, spans=(Span(*JANE, "DOCTOR"), Span(*SEVENTY, "AGE"), Span(*PARIS, "CITY")))
SYSTEM = Document("d", TEXT, spans=(Span(*JANE, "PATIENT"), Span(*SEVENTY, "DATE"), Span(*PARIS, "COUNTRY")))


def test_offsets() -> None:
    assert [TEXT[a:b] for a, b in (JANE, SEVENTY, PARIS)] == ["Jane Roe", "70", "Paris"]


def test_subcategory_level() -> None:
    # no label agrees: TP 0, FP 3, FN 3
    report = evaluate([GOLD], [SYSTEM], modes="strict")
    assert report["strict"].total.as_tuple() == (0, 3, 3)
    assert report["strict"].micro.f1 == 0.0


def test_category_level() -> None:
    # DOCTOR, PATIENT -> NAME; CITY, COUNTRY -> LOCATION; AGE -> AGE but DATE -> DATE
    # TP 2 (NAME, LOCATION), FP 1 (DATE), FN 1 (AGE): P = R = F1 = 2/3
    report = evaluate([GOLD], [SYSTEM], level="category", modes=["strict", "token"])
    res = report["strict"]
    assert res.total.as_tuple() == (2, 1, 1)
    assert res.micro.f1 == pytest.approx(2 / 3)
    assert set(res.labels) == {"NAME", "LOCATION", "AGE", "DATE"}
    # macro over NAME (1), LOCATION (1), AGE (0), DATE (0)
    assert res.macro.f1 == pytest.approx(0.5)
    # tokens: Jane, Roe, Paris agree at category level; 70 AGE vs DATE -> TP 3, FP 1, FN 1
    assert report["token"].total.as_tuple() == (3, 1, 1)
    assert report.confusion["AGE", "DATE"] == 1


def test_binary_level() -> None:
    # every label becomes PHI: all three spans match
    report = evaluate([GOLD], [SYSTEM], level="binary")
    for mode in ("strict", "relaxed", "token", "span"):
        assert report[mode].micro.f1 == 1.0, mode
        assert report[mode].labels == ("PHI",)


def test_hipaa_only_filter() -> None:
    # HIPAA Safe Harbor: DOCTOR, COUNTRY are not required -> dropped; PATIENT, AGE, DATE, CITY kept
    # gold keeps AGE 70, CITY Paris; system keeps PATIENT Jane Roe, DATE 70
    # strict: TP 0, FP 2, FN 2; at binary level: TP 1 (70), FP 1 (Jane Roe), FN 1 (Paris)
    report = evaluate([GOLD], [SYSTEM], hipaa_only=True, modes="strict")
    assert report["strict"].total.as_tuple() == (0, 2, 2)
    assert set(report["strict"].labels) == {"PATIENT", "AGE", "DATE", "CITY"}
    binary = evaluate([GOLD], [SYSTEM], hipaa_only=True, level="binary", modes="strict")
    assert binary["strict"].total.as_tuple() == (1, 1, 1)
    assert binary.options["hipaa_only"] is True


def test_hipaa_filter_applies_after_the_scheme_mapping() -> None:
    # MEDDOCAN NOMBRE_PERSONAL_SANITARIO -> DOCTOR (not HIPAA) is dropped,
    # NOMBRE_SUJETO_ASISTENCIA -> PATIENT (HIPAA) is kept
    text = "Dra Ruiz y paciente Ana"
    gold = Document(
        "d",
        text,
        spans=(Span(4, 8, "NOMBRE_PERSONAL_SANITARIO"), Span(20, 23, "NOMBRE_SUJETO_ASISTENCIA")),
    )
    report = evaluate([gold], [Document("d", text)], scheme="meddocan", hipaa_only=True, modes="strict")
    assert report["strict"].per_label() == {"PATIENT": report["strict"].per_label()["PATIENT"]}
    assert report["strict"].total.as_tuple() == (0, 0, 1)


def test_scheme_maps_both_sides() -> None:
    # gold in MEDDOCAN's native labels, system in canonical labels: equal once mapped
    text = "Ana nació el 3 de mayo"
    gold = Document("d", text, spans=(Span(0, 3, "NOMBRE_SUJETO_ASISTENCIA"), Span(13, 22, "FECHAS")))
    system = Document("d", text, spans=(Span(0, 3, "PATIENT"), Span(13, 22, "DATE")))
    assert evaluate([gold], [system], modes="strict")["strict"].total.as_tuple() == (0, 2, 2)
    mapped = evaluate([gold], [system], scheme="meddocan", modes="strict")
    assert mapped["strict"].total.as_tuple() == (2, 0, 0)
    assert mapped.options["scheme"] == "meddocan"


def test_scheme_from_a_yaml_file(tmp_path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("scheme: mine\nmapping:\n  NAME_X: PATIENT\n", encoding="utf-8")
    gold = Document("d", "Bob", spans=(Span(0, 3, "NAME_X"),))
    system = Document("d", "Bob", spans=(Span(0, 3, "PATIENT"),))
    report = evaluate([gold], [system], scheme=str(path), modes="strict")
    assert report["strict"].total.as_tuple() == (1, 0, 0)


def test_label_view() -> None:
    view = LabelView.build("category", "meddocan")
    assert view.label("CALLE") == "LOCATION"
    assert LabelView.build("binary").label("anything") == "PHI"
    assert LabelView(hipaa_only=True).label("DOCTOR") is None
