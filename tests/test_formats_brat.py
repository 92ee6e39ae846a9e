"""BRAT standoff codec: crafted fixtures, discontinuous spans, notes, CRLF, errors."""

from pathlib import Path

import pytest

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats import ReadReport, get_codec, read_corpus, write_corpus


def _pair(folder: Path, name: str, text: str, ann: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_bytes(text.encode("utf-8"))
    (folder / f"{name}.ann").write_bytes(ann.encode("utf-8"))


def test_reads_spans_ids_notes_and_discontinuous(tmp_path):
    text = "Juan Pérez, born 03/03/1946 in Madrid.\n"
    ann = (
        "T1\tNOMBRE_SUJETO_ASISTENCIA 0 10\tJuan Pérez\n"
        "T2\tFECHAS 17 27\t03/03/1946\n"
        "T3\tTERRITORIO 0 4;31 37\tJuan Madrid\n"
        "#1\tAnnotatorNotes T2\tbirth date\n"
    )
    _pair(tmp_path, "doc1", text, ann)
    (doc,) = read_corpus(tmp_path, "brat")
    assert doc.id == "doc1"
    assert [(s.start, s.end, s.label, s.id) for s in doc.spans] == [
        (0, 37, "TERRITORIO", "T3"),
        (0, 10, "NOMBRE_SUJETO_ASISTENCIA", "T1"),
        (17, 27, "FECHAS", "T2"),
    ]
    disc = doc.spans[0]
    assert disc.fragments == ((0, 4), (31, 37))
    assert doc.spans[2].attributes["note"] == "birth date"


def test_write_then_read_is_identical_including_notes_and_fragments(tmp_path):
    text = "Paciente: Ana\r\nGarcía López\r\nFecha 1/2/2020 ñ\r\n"
    spans = [
        Span(10, 13, "PATIENT", id="T7", attributes={"note": "first line\nsecond line"}),
        Span(15, 21, "PATIENT", fragments=((15, 21),)),
        Span(0, 8, "OTHER_PHI", fragments=((0, 3), (5, 8))),
        Span(34, 42, "DATE"),
    ]
    doc = Document("d1", text, spans=spans)
    write_corpus([doc], tmp_path, "brat")
    assert (tmp_path / "d1.txt").read_bytes() == text.encode("utf-8")
    ann = (tmp_path / "d1.ann").read_text("utf-8")
    assert "T7\tPATIENT 10 13\tAna" in ann
    (back,) = read_corpus(tmp_path, "brat")
    assert back.text == text
    assert [(s.start, s.end, s.label, s.fragments) for s in back.spans] == [
        (s.start, s.end, s.label, s.fragments) for s in doc.spans
    ]
    assert next(s for s in back.spans if s.id == "T7").attributes["note"] == "first line\nsecond line"


def test_span_across_line_break_is_written_as_fragments_and_read_back_whole(tmp_path):
    text = "Dr. John\nSmith came"
    doc = Document("d", text, spans=[Span(4, 14, "DOCTOR")])
    write_corpus([doc], tmp_path, "brat")
    line = (tmp_path / "d.ann").read_text("utf-8").splitlines()[0]
    assert line == "T1\tDOCTOR 4 8;9 14\tJohn Smith"
    (back,) = read_corpus(tmp_path, "brat")
    assert back.spans[0].key() == (4, 14, "DOCTOR") and not back.spans[0].is_discontinuous
    (kept,) = read_corpus(tmp_path, "brat", merge_line_fragments=False)
    assert kept.spans[0].fragments == ((4, 8), (9, 14))


def test_span_starting_with_line_break_keeps_offsets_and_ann_stays_one_line(tmp_path):
    text = "a\n\nb c"
    doc = Document("d", text, spans=[Span(1, 4, "X"), Span(0, 6, "Y")])
    write_corpus([doc], tmp_path, "brat")
    assert len((tmp_path / "d.ann").read_text("utf-8").splitlines()) == 2
    (back,) = read_corpus(tmp_path, "brat")
    assert [s.key() for s in back.spans] == [s.key() for s in doc.spans]


def test_bom_and_unicode_offsets_count_characters(tmp_path):
    text = "\ufeffNombre: Ñúñez 🙂 Zoë"
    _pair(tmp_path, "u", text, "T1\tPATIENT 9 14\tÑúñez\nT2\tPATIENT 17 20\tZoë\n")
    (doc,) = read_corpus(tmp_path, "brat")
    assert doc.text.startswith("\ufeff")
    assert [doc.span_text(s) for s in doc.spans] == ["Ñúñez", "Zoë"]


def test_empty_document_and_span_at_both_ends(tmp_path):
    docs = [
        Document("empty", ""),
        Document("edges", "Ana vio a Luis", spans=[Span(0, 3, "PATIENT"), Span(10, 14, "DOCTOR")]),
    ]
    write_corpus(docs, tmp_path, "brat")
    assert (tmp_path / "empty.ann").read_text("utf-8") == ""
    back = {d.id: d for d in read_corpus(tmp_path, "brat")}
    assert back["empty"].text == "" and back["empty"].spans == ()
    assert [s.key() for s in back["edges"].spans] == [(0, 3, "PATIENT"), (10, 14, "DOCTOR")]


def test_single_ann_or_txt_path(tmp_path):
    _pair(tmp_path, "one", "Ana", "T1\tPATIENT 0 3\tAna\n")
    (tmp_path / "alone.txt").write_text("no annotations", encoding="utf-8")
    assert read_corpus(tmp_path / "one.ann", "brat")[0].spans[0].key() == (0, 3, "PATIENT")
    assert read_corpus(tmp_path / "one.txt", "brat")[0].id == "one"
    assert read_corpus(tmp_path / "alone.txt", "brat")[0].spans == ()


def test_relations_and_attributes_are_kept_and_written_back(tmp_path):
    text = "Ana y Luis"
    ann = (
        "T1\tPATIENT 0 3\tAna\n"
        "T2\tFAMILY 6 10\tLuis\n"
        "R1\tRelative Arg1:T1 Arg2:T2\n"
        "A1\tNegated T2\n"
        "A2\tCertainty T1 High\n"
        "N1\tReference T1 Wiki:1\tAna\n"
    )
    _pair(tmp_path / "in", "r", text, ann)
    report = ReadReport()
    (doc,) = read_corpus(tmp_path / "in", "brat", report=report)
    assert doc.metadata["brat_extra"] == ["R1\tRelative Arg1:T1 Arg2:T2", "N1\tReference T1 Wiki:1\tAna"]
    assert doc.spans[0].attributes["brat_attributes"] == {"Certainty": "High"}
    assert doc.spans[1].attributes["brat_attributes"] == {"Negated": True}
    assert any("brat_extra" in w for w in report.warnings)
    write_corpus([doc], tmp_path / "out", "brat")
    (again,) = read_corpus(tmp_path / "out", "brat", report=ReadReport())
    assert again == doc


def test_recursive_ids_name_subfolders(tmp_path):
    _pair(tmp_path / "train", "a", "Ana", "T1\tPATIENT 0 3\tAna\n")
    _pair(tmp_path / "dev", "b", "Luis", "T1\tPATIENT 0 4\tLuis\n")
    assert read_corpus(tmp_path, "brat") == []
    docs = read_corpus(tmp_path, "brat", recursive=True)
    assert [d.id for d in docs] == ["dev/b", "train/a"]
    write_corpus(docs, tmp_path / "copy", "brat")
    assert (tmp_path / "copy" / "train" / "a.ann").exists()


def test_misaligned_span_is_an_error_without_repair_and_fixed_with_it(tmp_path):
    secret = "Ignacio"
    _pair(tmp_path, "m", f"Dr. {secret} vino.", f"T1\tDOCTOR 5 12\t{secret}\n")
    with pytest.raises(FormatError) as err:
        read_corpus(tmp_path, "brat")
    message = str(err.value)
    assert "m.ann:1" in message and "5-12" in message and "DOCTOR" in message
    assert secret not in message
    report = ReadReport()
    (doc,) = read_corpus(tmp_path, "brat", repair=True, report=report)
    assert doc.spans[0].key() == (4, 11, "DOCTOR")
    assert report.repaired == 1 and all(secret not in w for w in report.warnings)


def test_span_beyond_text_without_recorded_text_cannot_be_repaired(tmp_path):
    _pair(tmp_path, "x", "short", "T1\tX 2 40\n")
    with pytest.raises(FormatError, match="beyond the text length"):
        read_corpus(tmp_path, "brat", repair=True)


@pytest.mark.parametrize(
    "line",
    ["T1\tPATIENT zero 3\tAna", "T1\tPATIENT 0\tAna", "T1", "T1\tPATIENT 3 1\tAna"],
)
def test_malformed_t_lines_name_file_and_line(tmp_path, line):
    _pair(tmp_path, "bad", "Ana Ana", f"T9\tPATIENT 0 3\tAna\n{line}\n")
    with pytest.raises(FormatError) as err:
        read_corpus(tmp_path, "brat")
    assert "bad.ann:2" in str(err.value)


def test_non_utf8_text_is_a_clear_error_naming_the_file(tmp_path):
    (tmp_path / "latin.txt").write_bytes("Ana Muñoz".encode("latin-1"))
    (tmp_path / "latin.ann").write_text("T1\tPATIENT 0 3\tAna\n", encoding="utf-8")
    with pytest.raises(FormatError) as err:
        read_corpus(tmp_path, "brat")
    assert "latin.txt" in str(err.value) and "UTF-8" in str(err.value)
    (doc,) = read_corpus(tmp_path, "brat", encoding="latin-1")
    assert doc.text == "Ana Muñoz"


def test_skip_mode_keeps_reading_after_a_bad_document(tmp_path):
    _pair(tmp_path, "a_bad", "Ana", "T1\tPATIENT 0 9\tAnalysis\n")
    _pair(tmp_path, "b_good", "Luis", "T1\tPATIENT 0 4\tLuis\n")
    report = ReadReport()
    docs = read_corpus(tmp_path, "brat", report=report, on_error="skip")
    assert [d.id for d in docs] == ["b_good"]
    assert len(report.errors) == 1 and "a_bad.ann" in str(report.errors[0])


def test_ann_without_txt_is_reported(tmp_path):
    (tmp_path / "lonely.ann").write_text("T1\tX 0 1\ta\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"no matching \.txt"):
        read_corpus(tmp_path, "brat")


def test_labels_with_spaces_and_unsafe_ids_are_refused(tmp_path):
    with pytest.raises(FormatError, match="whitespace"):
        write_corpus([Document("d", "abc", spans=[Span(0, 1, "A B")])], tmp_path, "brat")
    with pytest.raises(FormatError, match="file name"):
        write_corpus([Document("../escape", "abc")], tmp_path, "brat")


def test_unknown_option_is_a_config_error(tmp_path):
    from clinideid.errors import ConfigError

    with pytest.raises(ConfigError, match="text_dir"):
        list(get_codec("brat").read(tmp_path, text_dir="x"))
