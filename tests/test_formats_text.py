"""Plain-text codec and the codec registry."""

import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, FormatError, UnknownFormatError
from clinideid.formats import ReadReport, available_formats, get_codec, read_corpus, write_corpus


def test_texts_roundtrip_exactly(tmp_path):
    docs = [Document("a", "line1\r\nline2\r"), Document("sub/b", "\ufeffñ 🙂"), Document("empty", "")]
    write_corpus(docs, tmp_path, "text")
    assert (tmp_path / "a.txt").read_bytes() == b"line1\r\nline2\r"
    back = read_corpus(tmp_path, "text", recursive=True)
    assert sorted((d.id, d.text) for d in back) == sorted((d.id, d.text) for d in docs)
    assert read_corpus(tmp_path / "a.txt", "text")[0].id == "a"


def test_spans_are_dropped_with_a_warning(tmp_path):
    report = ReadReport()
    write_corpus([Document("a", "Ana", spans=[Span(0, 3, "PATIENT")])], tmp_path, "text", report=report)
    assert report.warnings and read_corpus(tmp_path, "text")[0].spans == ()


def test_language_option_sets_the_language(tmp_path):
    (tmp_path / "x.txt").write_text("hola", encoding="utf-8")
    assert read_corpus(tmp_path, "text", language="es")[0].language == "es"


def test_registry_and_option_errors(tmp_path):
    assert set(available_formats()) >= {
        "brat",
        "i2b2",
        "i2b2_2006",
        "conll",
        "jsonl",
        "presidio",
        "physionet",
        "text",
    }
    with pytest.raises(UnknownFormatError, match="available formats"):
        get_codec("xml")
    with pytest.raises(ConfigError, match="on_error"):
        list(get_codec("text").read(tmp_path, on_error="ignore"))
    with pytest.raises(FormatError, match="does not exist"):
        read_corpus(tmp_path / "missing", "text")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FormatError, match="folder"):
        write_corpus([Document("a", "x")], tmp_path / "file", "text")
