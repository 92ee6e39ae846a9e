"""PhysioNet deid (id.text + id-phi.phrase) codec and its label mapping."""

import pytest

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats import ReadReport, read_corpus, write_corpus
from clinideid.labels import load_mapping

TEXT = (
    "START_OF_RECORD=1||||1||||\n"
    "Pt Jones seen 3/4.\n"
    "Call 555-1212.\n"
    "||||END_OF_RECORD\n"
    "START_OF_RECORD=1||||2||||\n"
    "Dr Ames on call\n"
    "||||END_OF_RECORD\n"
    "START_OF_RECORD=12||||1||||\n"
    "||||END_OF_RECORD\n"
)
PHRASE = "1 1 3 8 PTName Jones\n1 1 14 17 Date 3/4\n1 1 24 32 Phone 555-1212\n1 2 3 7 HCPName Ames\n"


def _write(tmp_path, text=TEXT, phrase=PHRASE):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "id.text").write_text(text, encoding="utf-8")
    (tmp_path / "id-phi.phrase").write_text(phrase, encoding="utf-8")
    return tmp_path / "id.text"


def test_reads_records_with_body_relative_offsets(tmp_path):
    docs = read_corpus(_write(tmp_path), "physionet")
    assert [d.id for d in docs] == ["P1-R1", "P1-R2", "P12-R1"]
    first = docs[0]
    assert first.text == "Pt Jones seen 3/4.\nCall 555-1212.\n"
    assert [(first.span_text(s), s.label) for s in first.spans] == [
        ("Jones", "PTName"),
        ("3/4", "Date"),
        ("555-1212", "Phone"),
    ]
    assert first.metadata == {"patient": 1, "record": 1}
    assert docs[2].text == "" and docs[2].spans == ()


def test_roundtrip_and_folder_read(tmp_path):
    docs = read_corpus(_write(tmp_path / "in"), "physionet")
    write_corpus(docs, tmp_path / "out", "physionet")
    assert (tmp_path / "out" / "id.text").read_text("utf-8") == TEXT
    assert read_corpus(tmp_path / "out", "physionet") == docs


def test_text_without_final_newline_roundtrips(tmp_path):
    doc = Document("P3-R4", "no newline at the end", spans=[Span(0, 2, "Other")])
    write_corpus([doc], tmp_path / "x.text", "physionet")
    assert (tmp_path / "x-phi.phrase").exists()
    (back,) = read_corpus(tmp_path / "x.text", "physionet")
    assert back.text == doc.text and back.spans[0].key() == (0, 2, "Other")


def test_other_ids_get_numbers_with_a_warning(tmp_path):
    report = ReadReport()
    write_corpus([Document("P2-R1", "a"), Document("note", "b")], tmp_path, "physionet", report=report)
    assert [d.id for d in read_corpus(tmp_path, "physionet")] == ["P2-R1", "P3-R1"]
    assert any("'note'" in w for w in report.warnings)


def test_end_inclusive_option(tmp_path):
    phrase = "1 1 3 7 PTName Jones\n"
    (doc, *_) = read_corpus(_write(tmp_path, phrase=phrase), "physionet", end_inclusive=True)
    assert doc.span_text(doc.spans[0]) == "Jones"


@pytest.mark.parametrize(
    ("text", "phrase", "message"),
    [
        (TEXT, "1 1 x 8 PTName Jones\n", "id-phi.phrase:1"),
        (TEXT, "1 1 3 8 PTName Jones\n9 9 0 1 Age 99\n", "patient 9 record 9"),
        (TEXT, "1 1 4 9 PTName Jones\n", "4-9"),
        ("START_OF_RECORD=1||||1||||\nJones\n", "", "END_OF_RECORD"),
    ],
)
def test_errors_are_located_and_quote_no_text(tmp_path, text, phrase, message):
    with pytest.raises(FormatError, match=message) as err:
        read_corpus(_write(tmp_path, text, phrase), "physionet")
    assert "Jones" not in str(err.value)


def test_missing_phrase_file_means_no_spans_with_a_warning(tmp_path):
    (tmp_path / "notes.text").write_text(TEXT, encoding="utf-8")
    report = ReadReport()
    docs = read_corpus(tmp_path / "notes.text", "physionet", report=report)
    assert all(not d.spans for d in docs) and report.warnings


def test_mapping_covers_the_physionet_types():
    mapping = load_mapping("physionet")
    assert mapping("PTName") == "PATIENT" and mapping("HCPName") == "DOCTOR"
    assert mapping("RelativeProxyName") == "FAMILY" and mapping("DateYear") == "DATE"
    assert {mapping(t) for t in ("Location", "Phone", "Age", "Other", "PTNameInitial")} == {
        "LOCATION_OTHER",
        "PHONE",
        "AGE",
        "OTHER_PHI",
        "PATIENT",
    }
