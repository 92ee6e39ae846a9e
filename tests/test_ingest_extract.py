"""Text extraction from each document format, with offsets back to the source and OCR confidences."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clinideid.errors import InputError
from clinideid.ingest import IngestOptions, extract
from ingest_fixtures import (
    LINES,
    PHI,
    degraded,
    mixed_pdf,
    odt,
    rich_docx,
    rtf,
    save_image,
    scanned_pdf,
    text_image,
    text_pdf,
)

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="Tesseract is not installed (Debian package tesseract-ocr)"
)


def _words(text: str) -> list[str]:
    return text.split()


def test_docx_every_story_is_extracted_and_mapped_to_its_text_elements(tmp_path: Path):
    doc = extract(rich_docx(tmp_path / "note.docx"), "en")
    assert doc.method == "docx" and doc.kind == "docx"
    for piece in (
        "Patient: Zebediah Quackenbush, MRN: 4829105",  # two runs, one paragraph
        LINES[2],  # nested table
        LINES[3],
        "Box: call Dr. Sarah Thompson",  # text box
        "Seen on 11/02/2023 by Dr. Sarah Thompson.",  # comment
        "MRN: 4829105",  # footer
    ):
        assert piece in doc.text
    assert doc.text.count("Patient: Zebediah Quackenbush") == 2  # body and header
    assert doc.units and all(u.end >= u.start for u in doc.units)
    # the units tile the text that came from text elements, in order, without overlap
    assert all(a.end <= b.start for a, b in zip(doc.units, doc.units[1:], strict=False))
    bold = next(u for u in doc.units if doc.text[u.start : u.end] == "Zebediah")
    assert bold.part == "/word/document.xml"
    assert doc.summary() == {"method": "docx", "pages": None}


def test_pdf_text_layer_has_word_boxes_on_the_page(tmp_path: Path):
    doc = extract(text_pdf(tmp_path / "a.pdf", [LINES[:2], LINES[2:]]), "en")
    assert doc.method == "pdf-text" and [p.method for p in doc.pages] == ["pdf-text", "pdf-text"]
    assert _words(doc.text) == _words(" ".join(LINES))
    for box in doc.boxes:
        word = doc.text[box.start : box.end]
        assert word and not any(c.isspace() for c in word)
        left, top, right, bottom = box.box
        assert 0 <= left < right <= 1 and 0 <= top < bottom <= 1
    name = next(b for b in doc.boxes if doc.text[b.start : b.end] == "Quackenbush,")
    assert name.page == 0 and name.box[1] < 0.2  # near the top of page 1
    assert next(b for b in doc.boxes if doc.text[b.start : b.end] == "555-0142").page == 1


@needs_tesseract
def test_scanned_and_mixed_pdfs_are_ocred_page_by_page(tmp_path: Path):
    scan = extract(scanned_pdf(tmp_path / "scan.pdf", [text_image(LINES)]), "en")
    assert scan.method == "ocr" and scan.ocr_languages == "eng"
    assert "Quackenbush" in scan.text and "4829105" in scan.text and "555-0142" in scan.text
    [page] = scan.pages
    assert page.ocr_confidence is not None and page.ocr_confidence > 80
    assert scan.summary()["ocr_confidence"] == {"1": page.ocr_confidence}
    mixed = extract(mixed_pdf(tmp_path / "mixed.pdf"), "en")
    assert mixed.method == "pdf-text+ocr"
    assert [p.method for p in mixed.pages] == ["pdf-text", "ocr"]
    assert "Thompson" in mixed.text and "555-0142" in mixed.text
    phone = next(b for b in mixed.boxes if "0142" in mixed.text[b.start : b.end])
    assert phone.page == 1


@needs_tesseract
@pytest.mark.parametrize("suffix", [".png", ".jpg"])
def test_images_are_ocred_with_boxes_and_confidence(tmp_path: Path, suffix: str):
    doc = extract(save_image(text_image(LINES), tmp_path / f"a{suffix}"), "en")
    assert doc.method == "ocr" and doc.kind == "image"
    assert doc.image_format == ("PNG" if suffix == ".png" else "JPEG")
    for phi in PHI:
        assert phi in doc.text
    for box in doc.boxes:
        assert doc.text[box.start : box.end].strip()
    assert doc.pages[0].ocr_confidence > 80 and not doc.warnings


@needs_tesseract
def test_multipage_tiff_and_language_packs(tmp_path: Path):
    pages = [text_image(LINES[:2]), text_image(["Patientin: Brünhilde Schäfer, geboren am 03.04.1955"])]
    path = tmp_path / "scan.tif"
    pages[0].save(path, save_all=True, append_images=pages[1:], dpi=(300, 300))
    doc = extract(path, "de")
    assert doc.ocr_languages == "deu" and len(doc.pages) == 2
    assert "Schäfer" in doc.text and "Quackenbush" in doc.text
    assert {b.page for b in doc.boxes} == {0, 1}
    assert extract(path, None, IngestOptions(ocr_languages="eng")).ocr_languages == "eng"


@needs_tesseract
def test_low_confidence_page_is_a_warning(tmp_path: Path):
    path = save_image(degraded(text_image(LINES)), tmp_path / "noisy.png")
    doc = extract(path, "en", IngestOptions(min_confidence=99.5))
    [warning] = doc.warnings
    assert warning.startswith("page 1: OCR") and "check the output by hand" in warning
    assert "Quackenbush" not in warning


def test_rtf_and_odt_to_text(tmp_path: Path):
    r = extract(rtf(tmp_path / "a.rtf", LINES), "en")
    assert r.method == "rtf" and _words(r.text) == _words(" ".join(LINES))
    o = extract(odt(tmp_path / "a.odt", LINES), "en")
    assert o.method == "odt" and o.text.splitlines() == ["Discharge summary", *LINES]


@pytest.mark.skipif(shutil.which("antiword") is None, reason="antiword is not installed (Debian antiword)")
def test_doc_that_antiword_cannot_read_is_an_input_error(tmp_path: Path):
    # a Word 97 file cannot be generated without Word or LibreOffice; antiword's rejection is tested
    bad = tmp_path / "old.doc"
    bad.write_bytes(b"\xd0\xcf\x11\xe0 not really a compound file")
    with pytest.raises(InputError, match="antiword"):
        extract(bad)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("a.pdf", b"%PDF-1.7 truncated", "not a readable PDF"),
        ("a.png", b"\x89PNG\r\n\x1a\n broken", "not a readable image"),
        ("a.docx", b"PK\x03\x04 broken zip", "not a readable DOCX"),
        ("a.rtf", b"plain words", "not an RTF"),
        ("a.odt", b"PK broken", "not a readable ODT"),
    ],
)
def test_corrupt_files_are_input_errors_without_content(tmp_path: Path, name: str, data: bytes, message: str):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError, match=message) as exc:
        extract(path)
    assert "broken" not in str(exc.value) and "plain words" not in str(exc.value)
