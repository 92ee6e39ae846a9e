"""CoNLL codec: schemes, offsets variant, companion texts, rebuilt texts, errors."""

import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, FormatError
from clinideid.formats import ReadReport, read_corpus, write_corpus
from clinideid.formats.conll import decode, detect_scheme, encode

DOC = Document(
    "n1",
    "Seen by Dr. Smith\non 02/03/2020.\n\n  Call  555-1234 # ok",
    language="en",
    spans=[Span(12, 17, "DOCTOR"), Span(21, 31, "DATE"), Span(42, 50, "PHONE")],
)


def test_encode_decode_bio_and_bioes():
    entities = [(0, 1, "A"), (2, 5, "B"), (5, 6, "B")]
    bio = encode(7, entities, "BIO")
    assert bio == ["B-A", "O", "B-B", "I-B", "I-B", "B-B", "O"]
    bioes = encode(7, entities, "BIOES")
    assert bioes == ["S-A", "O", "B-B", "I-B", "E-B", "S-B", "O"]
    assert decode(bio, "BIO") == (entities, 0)
    assert decode(bioes, "BIOES") == (entities, 0)
    assert detect_scheme(bio) == "BIO" and detect_scheme(bioes) == "BIOES"


def test_decode_is_lenient_and_counts_violations():
    assert decode(["I-A", "I-A", "O", "I-B"], "BIO") == ([(0, 2, "A"), (3, 4, "B")], 2)
    assert decode(["B-A", "I-B"], "BIO") == ([(0, 1, "A"), (1, 2, "B")], 1)
    assert decode(["B-A", "I-A"], "BIOES") == ([(0, 2, "A")], 1)
    assert decode(["U-A", "B-B", "L-B"], "BIOES") == ([(0, 1, "A"), (1, 3, "B")], 0)
    assert decode(["PER", "PER", "O", "LOC"], "BIO") == ([(0, 2, "PER"), (3, 4, "LOC")], 0)


@pytest.mark.parametrize("scheme", ["BIO", "BIOES"])
def test_offset_variant_roundtrips_text_exactly(tmp_path, scheme):
    path = tmp_path / "c.conll"
    write_corpus([DOC, Document("empty", "")], path, "conll", offsets=True, scheme=scheme)
    content = path.read_text("utf-8")
    assert "# doc_id = n1" in content and "# text = " in content and "Smith\t12\t17\t" in content
    assert "#\t" in content  # a '#' token is not taken for a comment
    back = read_corpus(path, "conll")
    assert [(d.id, d.text, d.language) for d in back] == [("n1", DOC.text, "en"), ("empty", "", None)]
    assert [s.key() for s in back[0].spans] == [s.key() for s in DOC.spans]


def test_plain_variant_rebuilds_a_text_from_tokens(tmp_path):
    path = tmp_path / "plain.conll"
    write_corpus([DOC], path, "conll")
    (doc,) = read_corpus(path, "conll")
    assert doc.text.split("\n")[0] == "Seen by Dr . Smith"
    assert [doc.span_text(s) for s in doc.spans] == ["Smith", "02 / 03 / 2020", "555 - 1234"]


def test_companion_texts_give_exact_offsets(tmp_path):
    write_corpus([DOC], tmp_path / "per_doc", "conll", texts=True)
    assert (tmp_path / "per_doc" / "n1.conll").exists() and (tmp_path / "per_doc" / "n1.txt").exists()
    (doc,) = read_corpus(tmp_path / "per_doc", "conll")
    assert doc.text == DOC.text and [s.key() for s in doc.spans] == [s.key() for s in DOC.spans]
    # or from another folder
    write_corpus([DOC], tmp_path / "labels.conll", "conll")
    write_corpus([DOC], tmp_path / "texts", "text")
    (doc2,) = read_corpus(tmp_path / "labels.conll", "conll", text_dir=tmp_path / "texts")
    assert doc2.text == DOC.text and doc2.spans == doc.spans


def test_reads_docstart_space_separated_and_extra_columns(tmp_path):
    path = tmp_path / "c03.conll"
    path.write_text(
        "-DOCSTART- -X- -X- O\n\nJohn NNP B-NP B-PER\nSmith NNP I-NP I-PER\nsaid VBD B-VP O\n\n"
        "-DOCSTART- -X- -X- O\n\nParis NNP B-NP S-LOC\n",
        encoding="utf-8",
    )
    docs = read_corpus(path, "conll")
    assert [d.id for d in docs] == ["c03-1", "c03-2"]
    assert docs[0].text == "John Smith said" and docs[0].spans[0].key() == (0, 10, "PER")
    assert docs[1].spans[0].key() == (0, 5, "LOC")


def test_partial_token_overlap_and_discontinuous_spans_are_reported(tmp_path):
    doc = Document(
        "d",
        "JohnSmith and Ann Lee",
        spans=[
            Span(0, 4, "PATIENT"),
            Span(14, 21, "PATIENT"),
            Span(18, 21, "FAMILY"),
            Span(0, 21, "X", fragments=((0, 2), (19, 21))),
        ],
    )
    report = ReadReport()
    write_corpus([doc], tmp_path / "o.conll", "conll", report=report)
    text = " ".join(report.warnings)
    assert "part of a token" in text and "not written" in text
    assert "John" not in text and "Smith" not in text


def test_companion_text_mismatch_is_reported(tmp_path):
    (tmp_path / "a.conll").write_text("Ana\tB-P\nvino\tO\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("Ana (sic) vino", encoding="utf-8")
    report = ReadReport()
    (doc,) = read_corpus(tmp_path / "a.conll", "conll", report=report)
    assert doc.spans[0].key() == (0, 3, "P") and "5 non-space" in report.warnings[0]
    (tmp_path / "a.txt").write_text("Otra cosa", encoding="utf-8")
    with pytest.raises(FormatError, match=r"a\.conll:1"):
        read_corpus(tmp_path / "a.conll", "conll")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Ana\tB-P\nlonely\n", "c.conll:2"),
        ("# text = not json\nAna\t0\t3\tB-P\n", "c.conll:1"),
        ('# text = "Ana"\nAnx\t0\t3\tB-P\n', "c.conll:2"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, content, message):
    (tmp_path / "c.conll").write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        read_corpus(tmp_path / "c.conll", "conll")


def test_bad_options(tmp_path):
    with pytest.raises(ConfigError, match="scheme"):
        write_corpus([DOC], tmp_path / "x.conll", "conll", scheme="IOB3")
    with pytest.raises(ConfigError, match="folder"):
        write_corpus([DOC], tmp_path / "x.conll", "conll", texts=True)


# --- the label column: detected, or chosen with label_column, never silently wrong ---------------------------


def _conll(tmp_path, content, name="c.conll"):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "content",
    [
        "Juan\tB-PER\tx1\nvive\tO\tx2\nen\tO\tx3\nLyon\tB-LOC\tx4\n",  # token label extra
        "Juan B-PER NNP\nvive O VBZ\nen O IN\nLyon B-LOC NNP\n",  # token label POS
    ],
)
def test_label_column_that_is_not_the_last_is_detected_and_reported(tmp_path, content):
    report = ReadReport()
    (doc,) = read_corpus(_conll(tmp_path, content), "conll", report=report)
    assert doc.text == "Juan vive en Lyon"
    assert [s.key() for s in doc.spans] == [(0, 4, "PER"), (13, 17, "LOC")]
    assert any("column 1" in w and "label_column" in w for w in report.warnings)


def test_last_column_wins_when_it_holds_tags(tmp_path):
    # CoNLL-2003: the chunk column holds tags too, but the last column is the labels
    (doc,) = read_corpus(_conll(tmp_path, "Juan NNP B-NP B-PER\nvive VBZ B-VP O\n"), "conll")
    assert [s.key() for s in doc.spans] == [(0, 4, "PER")]


def test_several_tag_columns_are_ambiguous(tmp_path):
    path = _conll(tmp_path, "\n# a comment\nJuan B-PER B-NP NNP\nvive O B-VP VBZ\n")
    with pytest.raises(FormatError, match=r"c\.conll:3: columns 1, 2 .*label_column") as err:
        read_corpus(path, "conll")
    assert "Juan" not in str(err.value) and "NNP" not in str(err.value)
    (doc,) = read_corpus(path, "conll", label_column=2)
    assert [s.key() for s in doc.spans] == [(0, 4, "NP"), (5, 9, "VP")]
    (doc,) = read_corpus(path, "conll", label_column=-3)
    assert [s.key() for s in doc.spans] == [(0, 4, "PER")]


def test_label_column_through_the_codec_option_mechanism(tmp_path):
    from clinideid.cli.convert import parse_options

    path = _conll(tmp_path, "Juan B-PER B-NP NNP\nvive O B-VP VBZ\n")
    options = parse_options(["label_column=1"], "--read-option")
    (doc,) = read_corpus(path, "conll", **options)
    assert [s.key() for s in doc.spans] == [(0, 4, "PER")]


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        # the chosen column holds POS tags, not labels
        ("Juan\tNNP\tB-PER\nvive\tVBZ\tO\n", {"label_column": 1}, r"c\.conll:1: column 1 .*not a tag"),
        ("Juan\tB-PER\tNNP\nvive\tO\tVBZ\n", {"label_column": -1}, r"c\.conll:1: column -1 .*not a tag"),
        ("Juan\tB-PER\nvive\tO\tVBZ\n", {"label_column": 2}, r"c\.conll:1: .*no label column 2"),
        # no column holds tags at all
        ("Juan\tNNP\tSmith\nvive\tVBZ\tx\n", {}, r"c\.conll:1: the last column .*not a tag"),
        ("Juan NNP\nvive VBZ\n", {}, r"c\.conll:1: the last column .*not a tag"),
        # lines of different widths: the other columns cannot be compared
        ("Juan\tB-PER\tNNP\nvive\tO\n", {}, r"c\.conll:1: the last column .*not a tag"),
    ],
)
def test_a_column_without_tags_is_an_error_naming_the_line(tmp_path, content, options, message):
    path = _conll(tmp_path, content)
    with pytest.raises(FormatError, match=message) as err:
        read_corpus(path, "conll", **options)
    assert "Juan" not in str(err.value) and "NNP" not in str(err.value)


def test_bad_label_column_file_is_skipped_with_on_error_skip(tmp_path):
    _conll(tmp_path, "Juan\tNNP\nvive\tVBZ\n", "bad.conll")
    _conll(tmp_path, "Ana\tB-P\nvino\tO\n", "good.conll")
    report = ReadReport()
    docs = read_corpus(tmp_path, "conll", on_error="skip", report=report)
    assert [d.id for d in docs] == ["good"] and "bad.conll" in str(report.errors[0])


def test_plain_io_labels_in_the_last_column_are_still_read(tmp_path):
    (doc,) = read_corpus(_conll(tmp_path, "Juan\tPER\nPérez\tPER\nvive\tO\n"), "conll")
    assert [s.key() for s in doc.spans] == [(0, 10, "PER")]


@pytest.mark.parametrize("value", [0, "x", 1.5, True])
def test_bad_label_column_option(tmp_path, value):
    path = _conll(tmp_path, "Ana\tB-P\n")
    with pytest.raises(ConfigError, match="label_column"):
        read_corpus(path, "conll", label_column=value)
