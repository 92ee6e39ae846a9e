"""Evaluation modes on a crafted document whose counts are worked out by hand in the comments.

TEXT tokens (clinideid.text.tokenize):
  John Smith visited Boston General on 2020 - 01 - 05 with Mary Jones , aged 45 . Discharged home .

GOLD (5 spans): PATIENT "John Smith", HOSPITAL "Boston General", DATE "2020-01-05", FAMILY "Mary Jones",
                AGE "45".
SYSTEM (8 spans, 7 unique): PATIENT "John" (partial), CITY "Boston" + HOSPITAL "General" (the gold hospital
                split in two), DATE "2020-01-05" twice (a duplicate), DOCTOR "with" (spurious), FAMILY "Jones"
                (partial), DATE "45" (exact offsets, wrong label: gold says AGE).
"""

from __future__ import annotations

import json

import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, InputError, LabelError
from clinideid.evaluate import MISSED, MODES, SPURIOUS, evaluate, parse_modes

TEXT = "John Smith visited Boston General on 2020-01-05 with Mary Jones, aged 45. Discharged home."


def sp(text: str, fragment: str, label: str, nth: int = 0) -> Span:
    start = -1
    for _ in range(nth + 1):
        start = text.index(fragment, start + 1)
    return Span(start, start + len(fragment), label)


GOLD_SPANS = [
    sp(TEXT, "John Smith", "PATIENT"),
    sp(TEXT, "Boston General", "HOSPITAL"),
    sp(TEXT, "2020-01-05", "DATE"),
    sp(TEXT, "Mary Jones", "FAMILY"),
    sp(TEXT, "45", "AGE"),
]
SYSTEM_SPANS = [
    sp(TEXT, "John", "PATIENT"),
    sp(TEXT, "Boston", "CITY"),
    sp(TEXT, "General", "HOSPITAL"),
    sp(TEXT, "2020-01-05", "DATE"),
    sp(TEXT, "2020-01-05", "DATE"),
    sp(TEXT, "with", "DOCTOR"),
    sp(TEXT, "Jones", "FAMILY"),
    sp(TEXT, "45", "DATE"),
]


def gold_doc(doc_id: str = "d1") -> Document:
    return Document(doc_id, TEXT, spans=tuple(GOLD_SPANS))


def system_doc(doc_id: str = "d1") -> Document:
    return Document(doc_id, TEXT, spans=tuple(SYSTEM_SPANS))


@pytest.fixture(scope="module")
def report():
    return evaluate([gold_doc()], [system_doc()])


def test_strict(report) -> None:
    # only DATE 2020-01-05 matches exactly; the duplicate counts once -> 7 unique system spans
    # TP 1, FP 6, FN 4 (PATIENT, HOSPITAL, FAMILY, AGE): P 1/7, R 1/5, F1 2/12
    t = report["strict"].total
    assert (t.tp, t.fp, t.fn) == (1, 6, 4)
    assert report["strict"].micro.precision == pytest.approx(1 / 7)
    assert report["strict"].micro.recall == pytest.approx(1 / 5)
    assert report["strict"].micro.f1 == pytest.approx(2 / 12)


def test_relaxed(report) -> None:
    # same-label overlaps: John~John Smith, General~Boston General, DATE, Jones~Mary Jones -> TP 4
    # FP: CITY Boston (label differs from HOSPITAL), DOCTOR with, DATE 45 -> 3; FN: AGE 45 -> 1
    t = report["relaxed"].total
    assert (t.tp, t.fp, t.fn) == (4, 3, 1)
    assert report["relaxed"].micro.f1 == pytest.approx(8 / 12)


def test_span_only(report) -> None:
    # offsets, labels ignored: 2020-01-05 and 45 match -> TP 2, FP 7 - 2 = 5, FN 5 - 2 = 3
    t = report["span"].total
    assert (t.tp, t.fp, t.fn) == (2, 5, 3)
    assert report["span"].micro.f1 == pytest.approx(4 / 12)
    assert report["span"].labels == ("PHI",)


def test_span_merged_meddocan(report) -> None:
    # system ranges merged across non-alphanumeric gaps: Boston+General -> (Boston General), 2020..+with
    # gold merged = gold (every gap has letters). Hits = strict {2020, 45} | merged {Boston General, 45}
    # -> TP 3. FP: system strict ranges not in gold and not inside a hit: John, with, Jones -> 3
    # (Boston and General lie inside the hit "Boston General"). FN: John Smith, Mary Jones -> 2.
    t = report["span_merged"].total
    assert (t.tp, t.fp, t.fn) == (3, 3, 2)
    assert report["span_merged"].micro.f1 == pytest.approx(6 / 11)


def test_token(report) -> None:
    # PATIENT John TP, Smith FN; HOSPITAL General TP, Boston FN; CITY Boston FP; DATE 5 tokens TP, 45 FP;
    # DOCTOR with FP; FAMILY Jones TP, Mary FN; AGE 45 FN -> TP 8, FP 3, FN 4
    res = report["token"]
    assert res.total.as_tuple() == (8, 3, 4)
    per = res.per_label()
    assert per["DATE"].as_tuple() == (5, 1, 0)
    assert per["HOSPITAL"].as_tuple() == (1, 0, 1)
    assert per["CITY"].as_tuple() == (0, 1, 0)
    assert res.micro.f1 == pytest.approx(16 / 23)


def test_token_binary(report) -> None:
    # gold PHI tokens 12, system 11 (John Boston General 2020-01-05(5) with Jones 45), shared 10
    res = report["token_binary"]
    assert res.total.as_tuple() == (10, 1, 2)
    assert res.micro.precision == pytest.approx(10 / 11)
    assert res.micro.recall == pytest.approx(10 / 12)


def test_the_modes_disagree(report) -> None:
    f1s = [report[m].micro.f1 for m in MODES]
    assert len(set(round(f, 6) for f in f1s)) == len(MODES)


def test_macro_differs_from_micro(report) -> None:
    # strict per label: PATIENT (0,1,1) HOSPITAL (0,1,1) CITY (0,1,0) DATE (1,1,0) DOCTOR (0,1,0)
    # FAMILY (0,1,1) AGE (0,0,1): 7 labels seen, only DATE scores: P 1/2, R 1, F1 2/3
    res = report["strict"]
    assert len(res.labels) == 7
    assert res.macro.precision == pytest.approx(0.5 / 7)
    assert res.macro.recall == pytest.approx(1 / 7)
    assert res.macro.f1 == pytest.approx((2 / 3) / 7)
    assert res.micro.f1 == pytest.approx(2 / 12)
    # relaxed: PATIENT, HOSPITAL, FAMILY F1 1; DATE (1,1,0) F1 2/3; CITY, DOCTOR, AGE 0
    assert report["relaxed"].macro.f1 == pytest.approx((3 + 2 / 3) / 7)


def test_confusion(report) -> None:
    # largest overlap first: DATE-DATE (10 chars), Boston General-General (7), Mary Jones-Jones (5),
    # John Smith-John (4), AGE 45-DATE 45 (2); Boston (CITY) and with (DOCTOR) stay unpaired
    c = report.confusion
    assert c["AGE", "DATE"] == 1
    assert c["HOSPITAL", "HOSPITAL"] == 1
    assert c["HOSPITAL", "CITY"] == 0
    assert c[SPURIOUS, "CITY"] == 1
    assert c[SPURIOUS, "DOCTOR"] == 1
    assert not any(s == MISSED for _, s in c.cells)
    assert c.confusions() == [("AGE", "DATE", 1)]


def test_leak_score_and_leaked_tokens(report) -> None:
    # leak score = strict FN / gold sentences = 4 / 2 (two sentences)
    leaks = report.leaks
    assert leaks.score.missed_entities == 4
    assert leaks.score.sentences == 2
    assert leaks.score.score == pytest.approx(2.0)
    # tokens no system span overlaps: Smith (PATIENT), Mary (FAMILY); text withheld by default
    assert [(t.start, t.end, t.label) for t in leaks.leaked] == [(5, 10, "PATIENT"), (53, 57, "FAMILY")]
    assert all(t.text is None for t in leaks.leaked)
    assert leaks.gold_tokens == 12
    assert leaks.leaked_by_label == {"PATIENT": 1, "FAMILY": 1}
    assert leaks.leaked_by_document == {"d1": 2}


def test_leak_text_only_on_request() -> None:
    report = evaluate([gold_doc()], [system_doc()], include_text=True, modes="strict")
    assert [t.text for t in report.leaks.leaked] == ["Smith", "Mary"]
    assert report.leaks.to_dict()["tokens"][0]["text"] == "Smith"
    plain = evaluate([gold_doc()], [system_doc()], modes="strict")
    dumped = json.dumps(plain.to_dict()) + plain.format_table()
    assert "Smith" not in dumped and "Mary" not in dumped


def test_custom_sentence_counter() -> None:
    report = evaluate([gold_doc()], [system_doc()], modes="strict", sentence_counter=lambda doc_id, text: 8)
    assert report.leaks.score.score == pytest.approx(4 / 8)


def test_gold_vs_gold_is_perfect_everywhere() -> None:
    report = evaluate([gold_doc("a"), gold_doc("b")], [gold_doc("a"), gold_doc("b")])
    for mode in MODES:
        res = report[mode]
        for scores in (res.micro, res.macro):
            assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0), mode
        assert res.total.fp == res.total.fn == 0
    assert report.leaks.score.score == 0.0
    assert report.leaks.leaked == []
    assert report.confusion.confusions() == []


def test_empty_system() -> None:
    # every gold span missed: strict TP 0, FP 0, FN 5 -> P = 0/0 = 0, R 0, F1 0
    report = evaluate([gold_doc()], [Document("d1", TEXT)])
    for mode in MODES:
        m = report[mode].micro
        assert (m.precision, m.recall, m.f1) == (0.0, 0.0, 0.0)
    assert report["strict"].total.as_tuple() == (0, 0, 5)
    assert report["token"].total.as_tuple() == (0, 0, 12)
    assert report.leaks.score.score == pytest.approx(5 / 2)
    assert len(report.leaks.leaked) == 12
    assert report.confusion[("PATIENT", MISSED)] == 1


def test_empty_gold() -> None:
    # nothing to find: all 7 unique system spans are false positives; R = 0/0 = 0
    report = evaluate([Document("d1", TEXT)], [system_doc()])
    assert report["strict"].total.as_tuple() == (0, 7, 0)
    assert report["strict"].micro.f1 == 0.0
    assert report.leaks.score.score == 0.0
    assert report.leaks.gold_tokens == 0


def test_both_empty() -> None:
    report = evaluate([Document("d1", TEXT)], [Document("d1", TEXT)])
    for mode in MODES:
        assert report[mode].labels == ()
        assert report[mode].micro.f1 == 0.0
    assert "no spans" in report.format_table()


def test_duplicates_count_once() -> None:
    g = Document("d", TEXT, spans=(sp(TEXT, "45", "AGE"), sp(TEXT, "45", "AGE")))
    s = Document("d", TEXT, spans=(sp(TEXT, "45", "AGE"),) * 3)
    report = evaluate([g], [s])
    for mode in ("strict", "relaxed", "span", "span_merged"):
        assert report[mode].total.as_tuple() == (1, 0, 0), mode
    assert report.confusion["AGE", "AGE"] == 1


def test_relaxed_is_one_to_one_and_deterministic() -> None:
    # gold "Boston General" overlaps system "Boston" (6 chars) and "General" (7 chars): General wins;
    # equal overlaps go to reading order
    text = "ab cd"
    g = Document("d", text, spans=(Span(0, 5, "CITY"),))
    s = Document("d", text, spans=(Span(0, 2, "CITY"), Span(3, 5, "CITY")))
    report = evaluate([g], [s], modes="relaxed")
    assert report["relaxed"].total.as_tuple() == (1, 1, 0)
    from clinideid.evaluate import greedy_overlap_matches

    pairs, missed, spurious = greedy_overlap_matches(g.spans, s.spans, same_label=True)
    assert pairs[0][1] == Span(0, 2, "CITY")
    assert spurious == [Span(3, 5, "CITY")]
    assert missed == []


def test_discontinuous_spans_compare_by_fragments() -> None:
    text = "Ana and Luis Perez"
    frag = Span(0, 18, "PATIENT", fragments=((0, 3), (13, 18)))
    whole = Span(0, 18, "PATIENT")
    report = evaluate([Document("d", text, spans=(frag,))], [Document("d", text, spans=(whole,))])
    assert report["strict"].total.as_tuple() == (0, 1, 1)
    assert report["relaxed"].total.as_tuple() == (1, 0, 0)
    # tokens: gold Ana, Perez; system Ana and Luis Perez
    assert report["token"].total.as_tuple() == (2, 2, 0)


def test_parse_modes() -> None:
    assert parse_modes(None) == MODES
    assert parse_modes("all") == MODES
    assert parse_modes(["strict,token", "strict"]) == ("strict", "token")
    with pytest.raises(ConfigError, match="unknown evaluation mode"):
        parse_modes("exact")


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="level"):
        evaluate([gold_doc()], [system_doc()], level="word")


def test_only_selected_modes_are_computed() -> None:
    report = evaluate([gold_doc()], [system_doc()], modes=["token"])
    assert report.modes == ["token"]
    with pytest.raises(ConfigError, match="was not evaluated"):
        report["strict"]
    assert report.leaks.score.missed_entities == 4  # the leak score still uses strict matching


def test_missing_documents() -> None:
    with pytest.raises(InputError, match=r"1 gold document\(s\) have no system output \('d2'\)"):
        evaluate([gold_doc("d1"), gold_doc("d2")], [system_doc("d1")])
    with pytest.raises(InputError, match="no gold"):
        evaluate([gold_doc("d1")], [system_doc("d1"), system_doc("x")])
    report = evaluate(
        [gold_doc("d1"), gold_doc("d2")], [system_doc("d1"), system_doc("x")], allow_missing=True
    )
    assert report.documents == ("d1", "d2", "x")
    assert len(report.warnings) == 2
    # d1 as before, d2 all missed (5 FN), x all spurious (7 FP)
    assert report["strict"].total.as_tuple() == (1, 13, 9)


def test_text_mismatch_is_warned_not_fatal() -> None:
    other = Document("d1", TEXT + " More.", spans=tuple(SYSTEM_SPANS))
    report = evaluate([gold_doc()], [other], modes="strict")
    assert report["strict"].total.as_tuple() == (1, 6, 4)
    assert any("differs from the gold text" in w for w in report.warnings)
    assert TEXT not in " ".join(report.warnings)


def test_unknown_label_with_scheme_is_a_label_error() -> None:
    g = Document("d", "x y", spans=(Span(0, 1, "NOT_A_LABEL"),))
    with pytest.raises(LabelError, match="NOT_A_LABEL"):
        evaluate([g], [g], scheme="meddocan")
    report = evaluate([g], [g], scheme="meddocan", label_fallback="OTHER_PHI")
    assert report["strict"].labels == ("OTHER_PHI",)


def test_report_is_json_and_readable(report) -> None:
    data = json.loads(json.dumps(report.to_dict()))
    assert data["modes"]["strict"]["micro"]["tp"] == 1
    assert data["modes"]["token"]["per_label"]["DATE"]["tp"] == 5
    assert data["modes"]["strict"]["per_document"]["d1"]["DATE"] == [1, 1, 0]
    assert data["confusion"]["AGE"] == {"DATE": 1}
    assert data["leaks"]["leak_score"]["score"] == pytest.approx(2.0)
    table = report.format_table(per_document=True)
    for heading in ("Summary", "Per label - strict", "Confusion", "Leaks", "Per document - strict"):
        assert heading in table
    strict_line = next(line for line in table.splitlines() if line.startswith("strict "))
    assert "0.1429" in strict_line and "0.1667" in strict_line


def test_duplicate_document_ids_are_an_input_error() -> None:
    with pytest.raises(InputError, match="system corpus: duplicate document id 'd1'"):
        evaluate([gold_doc()], [system_doc(), system_doc()])
