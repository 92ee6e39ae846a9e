"""i2b2 2014 / MEDDOCAN XML codec."""

import pytest

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats import ReadReport, read_corpus, write_corpus
from clinideid.formats.i2b2 import label_from_tag, tag_for_label

I2B2_SAMPLE = """<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[
Record date: 2067-05-03\r
Mr. Tom Hill is 55.
]]></TEXT>
<TAGS>
<DATE id="P0" start="14" end="24" text="2067-05-03" TYPE="DATE" comment="" />
<NAME id="P1" start="30" end="38" text="Tom Hill" TYPE="PATIENT" comment="check" />
<AGE id="P2" start="42" end="44" text="55" TYPE="AGE" comment="" />
</TAGS>
</deIdi2b2>
"""

MEDDOCAN_SAMPLE = """<?xml version='1.0' encoding='UTF-8'?>
<MEDDOCAN>
  <TEXT><![CDATA[Nombre:  Ernesto.
Sexo: H.
]]></TEXT>
  <TAGS>
    <NAME id="T21" start="9" end="16" text="Ernesto" TYPE="NOMBRE_SUJETO_ASISTENCIA" comment=""/>
    <OTHER id="T12" start="24" end="25" text="H" TYPE="SEXO_SUJETO_ASISTENCIA" comment=""/>
  </TAGS>
</MEDDOCAN>
"""


def test_reads_i2b2_with_exact_crlf_offsets_and_canonical_labels(tmp_path):
    (tmp_path / "100-01.xml").write_bytes(I2B2_SAMPLE.encode("utf-8"))
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert doc.id == "100-01"
    assert "\r\n" in doc.text  # raw CDATA, not the parser's normalised text
    assert [(s.key(), s.id) for s in doc.spans] == [
        ((14, 24, "DATE"), "P0"),
        ((30, 38, "PATIENT"), "P1"),
        ((42, 44, "AGE"), "P2"),
    ]
    assert doc.spans[1].attributes["note"] == "check"


def test_reads_meddocan_xml_keeping_native_labels(tmp_path):
    (tmp_path / "S1.xml").write_text(MEDDOCAN_SAMPLE, encoding="utf-8")
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert [doc.span_text(s) for s in doc.spans] == ["Ernesto", "H"]
    assert [s.label for s in doc.spans] == ["NOMBRE_SUJETO_ASISTENCIA", "SEXO_SUJETO_ASISTENCIA"]
    assert all("i2b2_tag" not in s.attributes for s in doc.spans)
    write_corpus([doc], tmp_path / "out", "i2b2", root="MEDDOCAN")
    xml = (tmp_path / "out" / "S1.xml").read_text("utf-8")
    assert "<MEDDOCAN>" in xml and '<NAME id="T21" start="9" end="16"' in xml
    assert 'TYPE="NOMBRE_SUJETO_ASISTENCIA"' in xml and "<OTHER id=" in xml
    assert read_corpus(tmp_path / "out", "i2b2") == [doc]


@pytest.mark.parametrize(
    ("tag", "type_", "label"),
    [
        ("NAME", "PATIENT", "PATIENT"),
        ("LOCATION", "OTHER", "LOCATION_OTHER"),
        ("LOCATION", "LOCATION-OTHER", "LOCATION_OTHER"),
        ("CONTACT", "IPADDRESS", "IPADDR"),
        ("ID", "SOCIALSECURITY", "SSN"),
        ("PHI", "DOCTOR", "DOCTOR"),
        ("LOCATION", "ROOM", "ROOM"),
        ("NAME", "NOMBRE_PERSONAL_SANITARIO", "NOMBRE_PERSONAL_SANITARIO"),
    ],
)
def test_label_from_tag(tag, type_, label):
    assert label_from_tag(tag, type_) == label


@pytest.mark.parametrize(
    "label", ["PATIENT", "LOCATION_OTHER", "OTHER_PHI", "SEX", "FECHAS", "CUSTOM", "OTHER"]
)
def test_written_tags_read_back_as_the_same_label(tmp_path, label):
    doc = Document("d", "some PHI here", spans=[Span(5, 8, label)])
    write_corpus([doc], tmp_path, "i2b2")
    assert read_corpus(tmp_path, "i2b2")[0].spans[0].label == label
    assert label_from_tag(*tag_for_label(label)) == label or label == "OTHER"


def test_unusual_tag_is_remembered(tmp_path):
    xml = I2B2_SAMPLE.replace('<AGE id="P2"', '<PHI id="P2"')
    (tmp_path / "a.xml").write_text(xml, encoding="utf-8")
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert doc.spans[2].label == "AGE" and doc.spans[2].attributes["i2b2_tag"] == "PHI"
    write_corpus([doc], tmp_path / "o", "i2b2")
    assert '<PHI id="P2"' in (tmp_path / "o" / "a.xml").read_text("utf-8")


def test_roundtrip_with_cdata_terminator_quotes_and_newlines_in_span_text(tmp_path):
    text = 'x ]]> "Ana\r\nO\'Neil" & <b>\n'
    doc = Document("d", text, spans=[Span(7, 18, "PATIENT"), Span(0, 1, "X"), Span(20, 25, "URL")])
    write_corpus([doc], tmp_path, "i2b2")
    (back,) = read_corpus(tmp_path, "i2b2")
    assert back.text == text
    assert [s.key() for s in back.spans] == [s.key() for s in doc.spans]


def test_escaped_text_without_cdata_is_read(tmp_path):
    xml = '<deIdi2b2><TEXT>a &amp; b &lt;Ana&gt; &#233;</TEXT><TAGS><NAME start="7" end="10" TYPE="PATIENT"/></TAGS></deIdi2b2>'
    (tmp_path / "e.xml").write_text(xml, encoding="utf-8")
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert doc.text == "a & b <Ana> é" and doc.span_text(doc.spans[0]) == "Ana"


def test_empty_text_and_no_tags(tmp_path):
    write_corpus([Document("empty", "")], tmp_path, "i2b2")
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert doc.text == "" and doc.spans == ()


def test_discontinuous_span_is_split_with_a_warning(tmp_path):
    doc = Document("d", "Ana y Luis", spans=[Span(0, 10, "PATIENT", fragments=((0, 3), (6, 10)))])
    report = ReadReport()
    write_corpus([doc], tmp_path, "i2b2", report=report)
    assert any("discontinuous" in w for w in report.warnings)
    assert [s.key() for s in read_corpus(tmp_path, "i2b2")[0].spans] == [
        (0, 3, "PATIENT"),
        (6, 10, "PATIENT"),
    ]


def test_malformed_xml_names_file_and_line_without_text(tmp_path):
    (tmp_path / "broken.xml").write_text("<deIdi2b2>\n<TEXT>secret name</TEXT>\n<TAGS>\n</deIdi2b2>\n")
    with pytest.raises(FormatError) as err:
        read_corpus(tmp_path, "i2b2")
    assert "broken.xml:4" in str(err.value) and "secret" not in str(err.value)


def test_mismatching_tag_text_is_an_error_and_can_be_repaired(tmp_path):
    xml = I2B2_SAMPLE.replace('start="30" end="38"', 'start="31" end="39"')
    (tmp_path / "m.xml").write_text(xml, encoding="utf-8")
    with pytest.raises(FormatError, match="31-39"):
        read_corpus(tmp_path, "i2b2")
    (doc,) = read_corpus(tmp_path, "i2b2", repair=True)
    assert doc.spans[1].key() == (30, 38, "PATIENT")


def test_characters_xml_cannot_hold_are_refused(tmp_path):
    with pytest.raises(FormatError, match="U\\+0001"):
        write_corpus([Document("d", "a\x01b")], tmp_path, "i2b2")


@pytest.mark.parametrize(
    "decoy",
    [
        "<!-- old version: <TEXT>Decoy Person</TEXT> -->",
        "<?review <TEXT>Decoy Person</TEXT>?>",
        "<META><![CDATA[<TEXT>Decoy Person</TEXT>]]></META>",
        '<META note="&lt;TEXT&gt;Decoy Person&lt;/TEXT&gt;"><TEXT>Decoy Person</TEXT></META>',
    ],
)
def test_text_is_the_root_child_not_an_earlier_lookalike(tmp_path, decoy):
    xml = I2B2_SAMPLE.replace("<deIdi2b2>\n", f"<deIdi2b2>\n{decoy}\n", 1)
    (tmp_path / "d.xml").write_bytes(("\ufeff" + xml).encode("utf-8"))
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert "Decoy" not in doc.text and doc.text.startswith("\nRecord date: 2067-05-03\r\n")
    assert [doc.span_text(s) for s in doc.spans] == ["2067-05-03", "Tom Hill", "55"]


def test_comments_and_processing_instructions_inside_text_are_skipped(tmp_path):
    xml = '<deIdi2b2><TEXT a=">">Ana<!-- note --> y<?pi x?> Luis</TEXT><TAGS><NAME start="6" end="10" TYPE="PATIENT"/></TAGS></deIdi2b2>'
    (tmp_path / "c.xml").write_text(xml, encoding="utf-8")
    (doc,) = read_corpus(tmp_path, "i2b2")
    assert doc.text == "Ana y Luis" and doc.span_text(doc.spans[0]) == "Luis"


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        (
            "<deIdi2b2>\n<TEXT>Ana</TEXT>\n<TEXT>Luis</TEXT>\n<TAGS/>\n</deIdi2b2>\n",
            r"x\.xml:3: has 2 <TEXT> elements under the root",
        ),
        ("<deIdi2b2>\n<!-- <TEXT>Ana</TEXT> -->\n<TAGS/>\n</deIdi2b2>\n", r"x\.xml: has no <TEXT> element"),
        ("<deIdi2b2>\n<META><TEXT>Ana</TEXT></META>\n</deIdi2b2>\n", r"x\.xml: has no <TEXT> element"),
    ],
)
def test_missing_or_repeated_text_is_an_error_without_text(tmp_path, xml, message):
    (tmp_path / "x.xml").write_text(xml, encoding="utf-8")
    with pytest.raises(FormatError, match=message) as err:
        read_corpus(tmp_path, "i2b2")
    assert "Ana" not in str(err.value) and "Luis" not in str(err.value)
