"""i2b2 2006 inline-tag XML codec."""

import pytest

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats import ReadReport, read_corpus, write_corpus
from clinideid.labels import load_mapping

SAMPLE = """<ROOT>
<RECORD ID="101">
<TEXT>
Seen by Dr. <PHI TYPE="DOCTOR">Smith</PHI> on <PHI TYPE="DATE">01/02</PHI> &amp; <PHI TYPE="ID">12-34</PHI>
</TEXT>
</RECORD>
<RECORD ID="102">
<TEXT><PHI TYPE="PATIENT">Ann</PHI></TEXT>
</RECORD>
</ROOT>
"""


def test_reads_inline_tags_into_offsets(tmp_path):
    path = tmp_path / "set.xml"
    path.write_text(SAMPLE, encoding="utf-8")
    first, second = read_corpus(path, "i2b2_2006")
    assert first.id == "101"
    assert [(first.span_text(s), s.label) for s in first.spans] == [
        ("Smith", "DOCTOR"),
        ("01/02", "DATE"),
        ("12-34", "ID"),
    ]
    assert first.text.startswith("\nSeen by Dr. Smith on 01/02 & 12-34")
    assert second.text == "Ann" and second.spans[0].key() == (0, 3, "PATIENT")
    mapping = load_mapping("i2b2_2006")
    assert [mapping(s.label) for s in first.spans] == ["DOCTOR", "DATE", "IDNUM"]


def test_write_escapes_and_roundtrips_carriage_returns(tmp_path):
    text = 'A & B <x> said:\r\n"Jo" ]]>\n'
    doc = Document("r1", text, spans=[Span(0, 1, "PATIENT"), Span(17, 21, "DOCTOR"), Span(22, 25, "ID")])
    path = tmp_path / "out.xml"
    write_corpus([doc, Document("r2", "")], path, "i2b2_2006")
    raw = path.read_text("utf-8")
    assert "&amp;" in raw and "&lt;x&gt;" in raw and "&#13;" in raw
    back = read_corpus(path, "i2b2_2006")
    assert [(d.id, d.text) for d in back] == [("r1", text), ("r2", "")]
    assert [s.key() for s in back[0].spans] == [s.key() for s in doc.spans]


def test_overlapping_spans_cannot_be_written(tmp_path):
    doc = Document("d", "John Smith", spans=[Span(0, 10, "PATIENT"), Span(5, 10, "DOCTOR")])
    with pytest.raises(FormatError, match="overlap") as err:
        write_corpus([doc], tmp_path / "o.xml", "i2b2_2006")
    assert "John" not in str(err.value)


def test_discontinuous_span_is_written_as_fragments(tmp_path):
    doc = Document("d", "Ann and Bob", spans=[Span(0, 11, "PATIENT", fragments=((0, 3), (8, 11)))])
    report = ReadReport()
    write_corpus([doc], tmp_path / "o.xml", "i2b2_2006", report=report)
    assert report.warnings
    assert [s.key() for s in read_corpus(tmp_path / "o.xml", "i2b2_2006")[0].spans] == [
        (0, 3, "PATIENT"),
        (8, 11, "PATIENT"),
    ]


def test_missing_type_and_bad_xml_are_clear_errors(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text('<ROOT><RECORD ID="1"><TEXT><PHI>x</PHI></TEXT></RECORD></ROOT>', encoding="utf-8")
    with pytest.raises(FormatError, match="no TYPE"):
        read_corpus(path, "i2b2_2006")
    path.write_text('<ROOT><RECORD ID="1"><TEXT>x</RECORD></ROOT>', encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.xml:1"):
        read_corpus(path, "i2b2_2006")
