"""DOCX output: replacements written into the runs (a span across runs too), formatting and structure
kept, people and properties removed, links whose text held PHI unlinked."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx

from clinideid.ingest import extract
from clinideid.ingest.docx import deidentified_docx
from clinideid.ingest.outputs import text_docx
from ingest_fixtures import EMAIL, rich_docx


def _edit(text: str, old: str, new: str, nth: int = 0) -> tuple[int, int, str]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(old, start + 1)
    return start, start + len(old), new


def test_span_across_runs_goes_into_the_first_and_formatting_stays(tmp_path: Path):
    source = rich_docx(tmp_path / "a.docx")
    doc = extract(source, "en")
    edits = [
        _edit(doc.text, "Zebediah Quackenbush", "[NAME]"),  # across the bold run and the next
        _edit(doc.text, "4829105", "[ID]", nth=0),
        _edit(doc.text, EMAIL, "[EMAIL]"),
    ]
    out = docx.Document(io.BytesIO(deidentified_docx(source, edits)))
    runs = [r for r in out.paragraphs[0].runs if r.text]  # (the comment's reference run is empty)
    assert [r.text for r in runs] == ["Patient: ", "[NAME]", ", MRN: [ID]"]
    assert runs[1].bold and not runs[2].bold
    assert out.tables[0].cell(1, 1).tables[0].cell(0, 0).text == "Phone: (617) 555-0142"  # untouched
    again = extract(tmp_path / "a.docx", "en")
    assert again.text == doc.text  # the source is not modified
    data = deidentified_docx(source, edits)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        rels = z.read("word/_rels/document.xml.rels").decode("utf-8")
        body = z.read("word/document.xml").decode("utf-8")
    assert "mailto:" not in rels and "quackenbush@" not in body  # the link's target went with its text
    assert "[EMAIL]" in body


def test_properties_people_and_unchanged_parts(tmp_path: Path):
    source = rich_docx(tmp_path / "a.docx")
    out_bytes = deidentified_docx(source, [])
    out = docx.Document(io.BytesIO(out_bytes))
    props = out.core_properties
    assert (props.author, props.last_modified_by, props.title) == ("", "", "")
    assert props.created is None and props.modified is None
    with zipfile.ZipFile(io.BytesIO(out_bytes)) as z:
        comments = z.read("word/comments.xml").decode("utf-8")
        names = z.namelist()
    assert 'w:author=""' in comments and 'w:initials=""' in comments and "Sarah Thompson" in comments
    assert "docProps/app.xml" not in names
    assert out.sections[0].header.paragraphs[0].text == "Patient: Zebediah Quackenbush"  # no edit given


def test_text_docx_is_one_paragraph_per_line_and_xml_safe():
    out = docx.Document(io.BytesIO(text_docx("line one\nline\x0ctwo\x00")))
    assert [p.text for p in out.paragraphs] == ["line one", "line two "]
    assert out.core_properties.author == ""


def test_a_source_changed_after_reading_is_not_written(tmp_path: Path):
    import pytest

    from clinideid.errors import InputError
    from clinideid.ingest.outputs import render_output
    from clinideid.pipeline import DeidResult

    source = rich_docx(tmp_path / "a.docx")
    doc = extract(source, "en")
    unchanged = DeidResult("a", doc.text, "en", [], [])
    assert render_output(doc, unchanged)[:2] == b"PK"
    d = docx.Document(str(source))
    d.paragraphs[0].insert_paragraph_before("A new first line shifts every offset.")
    d.save(source)
    with pytest.raises(InputError, match="changed while it was being de-identified"):
        render_output(doc, unchanged)
