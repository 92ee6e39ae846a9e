"""``clinideid deid`` on a folder of documents mixed with text: every output rendered back to text (DOCX
re-read, PDF text layer and OCR of the rendered pages, image OCR) holds none of the planted PHI; metadata
and the original text layer are gone; unsupported and corrupt files fail with a reason."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import docx
import pytest
from PIL import Image
from typer.testing import CliRunner

from clinideid.cli import _register_commands, app
from clinideid.ingest import extract
from ingest_fixtures import (
    LINES,
    PHI,
    mixed_pdf,
    ocr_text,
    odt,
    pdf_text_layer,
    rich_docx,
    rtf,
    save_image,
    scanned_pdf,
    text_image,
    text_pdf,
    word97_doc,
)

_register_commands()
runner = CliRunner()

pytestmark = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="Tesseract is not installed (Debian package tesseract-ocr)"
)


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "secret.key"
    path.write_text("5f" * 8 + "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718" + "\n", encoding="ascii")
    return path


#: TIFF/EXIF tags that describe an image: description, make, model, software, date, artist, host, copyright,
#: XMP, IPTC, EXIF and GPS blocks
DESCRIPTIVE_TAGS = {270, 271, 272, 305, 306, 315, 316, 33432, 700, 33723, 34665, 34853}


def deid(*args: str):
    return runner.invoke(app, ["deid", *args, "--no-progress"], catch_exceptions=False)


def _jpeg_with_exif(path: Path) -> Path:
    image = text_image(LINES)
    exif = Image.Exif()
    exif[0x013B] = "Dr. Sarah Thompson"  # Artist
    exif[0x010E] = "Zebediah Quackenbush"  # ImageDescription
    image.save(path, dpi=(300, 300), exif=exif, quality=95)
    return path


def _folder(src: Path) -> None:
    (src / "sub").mkdir(parents=True)
    rich_docx(src / "letter.docx")
    text_pdf(src / "typed.pdf", [LINES[:2], LINES[2:]])
    scanned_pdf(src / "sub" / "scan.pdf", [text_image(LINES)])
    mixed_pdf(src / "mixed.pdf")
    save_image(text_image(LINES), src / "photo.png")
    _jpeg_with_exif(src / "photo.jpg")
    frames = [text_image(LINES[:2]), text_image(LINES[2:])]
    frames[0].save(
        src / "fax.tif",
        save_all=True,
        append_images=frames[1:],
        dpi=(300, 300),
        tiffinfo={315: "Dr. Thompson"},
    )
    rtf(src / "old.rtf", LINES)
    odt(src / "open.odt", LINES)
    (src / "note.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (src / "broken.pdf").write_bytes(b"%PDF-1.7 cut short")
    (src / "table.xyz").write_bytes(b"\x00\x01")
    (src / "notes.jsonl").write_text('{"text": "x"}\n', encoding="utf-8")
    (src / ".DS_Store").write_bytes(b"\x00")


def _no_phi(text: str, where: str) -> None:
    found = [phi for phi in PHI if phi in text]
    assert not found, f"{where} still holds {found}"


def test_mixed_folder_outputs_hold_no_planted_phi(tmp_path: Path, key: Path):
    src, out = tmp_path / "in", tmp_path / "out"
    _folder(src)
    res = deid(str(src), "-o", str(out), "-l", "en", "--key-file", str(key))
    assert res.exit_code == 3, res.output  # the broken, unsupported and JSONL files
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 10 and summary["failed"] == 3 and summary["ignored"] == 1
    errors = {e["id"]: e["error"] for e in summary["errors"]}
    assert errors["broken.pdf"] == "broken.pdf: not a readable PDF; not read"
    assert "unsupported file type (.xyz)" in errors["table.xyz"]
    assert "give it as the input on its own" in errors["notes.jsonl"]

    # the de-identified text of every document
    for name in (
        "letter.docx",
        "typed.pdf",
        "sub/scan.pdf",
        "mixed.pdf",
        "photo.png",
        "photo.jpg",
        "fax.tif",
        "old.rtf",
        "open.odt",
        "note",
    ):
        text = (out / f"{name}.txt").read_text("utf-8")
        _no_phi(text, name)
        assert "chest pain" in text or name == "mixed.pdf"  # mixed.pdf holds lines 0-2 only

    # DOCX: re-read; formatting, tables, header, footer, comment kept; properties and authors cleared
    letter = extract(out / "letter.docx", "en")
    _no_phi(letter.text, "letter.docx")
    assert LINES[3] in letter.text and "Patient: " in letter.text and "MRN: " in letter.text
    d = docx.Document(str(out / "letter.docx"))
    assert d.paragraphs[0].runs[1].bold and d.paragraphs[0].runs[1].text  # the bold first name, replaced
    assert d.core_properties.author == "" and d.core_properties.last_modified_by == ""
    assert d.core_properties.title == "" and d.core_properties.created is None
    with zipfile.ZipFile(out / "letter.docx") as z:
        every_part = b"".join(z.read(n) for n in z.namelist()).decode("utf-8", "replace")
    _no_phi(every_part, "letter.docx parts")
    assert "Sarah" not in every_part  # the comment's author

    # PDFs: image only (no text layer, no metadata), OCR of the pages holds no PHI but the rest of the text
    for name in ("typed.pdf", "sub/scan.pdf", "mixed.pdf"):
        assert pdf_text_layer(out / name) == ""
        raw = (out / name).read_bytes()
        assert b"Thompson" not in raw and b"Quackenbush" not in raw and b"ReportLab" not in raw
        import pypdfium2 as pdfium

        meta = pdfium.PdfDocument(str(out / name)).get_metadata_dict()
        assert not any(meta.get(k) for k in ("Title", "Author", "Subject", "Keywords", "Producer"))
        assert meta.get("Creator") in ("", "PDFium") and b"/Metadata" not in raw  # no XMP
        seen = ocr_text(out / name)
        _no_phi(seen, f"OCR of {name}")
        assert "Patient" in seen and "Seen on" in seen  # the rest of the text is still there

    # images: same format, no EXIF, OCR without PHI
    for name in ("photo.png", "photo.jpg", "fax.tif"):
        with Image.open(out / name) as im:
            assert im.format == {"png": "PNG", "jpg": "JPEG", "tif": "TIFF"}[name[-3:]]
            tags = set(im.getexif())  # a TIFF's own layout tags are there; nothing describing it may be
            assert not tags & DESCRIPTIVE_TAGS and "exif" not in im.info and "xmp" not in im.info
            assert name == "fax.tif" or not tags
            if name == "fax.tif":
                assert im.n_frames == 2
        seen = ocr_text(out / name)
        _no_phi(seen, f"OCR of {name}")
        assert "Patient" in seen

    # RTF and ODT: a new DOCX of the de-identified text
    for name in ("old.rtf", "open.odt"):
        rebuilt = extract(out / f"{name}.docx", "en")
        _no_phi(rebuilt.text, name)
        assert LINES[3] in rebuilt.text

    # reports: how each text was obtained
    reports = {r["id"]: r for r in map(json.loads, (out / "report.jsonl").read_text("utf-8").splitlines())}
    assert reports["letter.docx"]["extraction"] == {"method": "docx", "pages": None}
    assert reports["typed.pdf"]["extraction"] == {"method": "pdf-text", "pages": 2}
    scan = reports["sub/scan.pdf"]["extraction"]
    assert scan["method"] == "ocr" and scan["ocr_languages"] == "eng" and scan["ocr_confidence"]["1"] > 80
    assert reports["mixed.pdf"]["extraction"]["ocr_pages"] == [2]
    assert reports["fax.tif"]["extraction"]["pages"] == 2
    assert "extraction" not in reports["note"]


def test_hash_names_low_confidence_warnings_resume_and_overwrite(tmp_path: Path, key: Path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    rich_docx(src / "Quackenbush.docx")
    save_image(text_image(LINES), src / "Quackenbush-scan.png")
    (src / "Quackenbush.pdf").write_bytes(b"%PDF-1.4 broken")
    args = [str(src), "-o", str(out), "-l", "en", "--key-file", str(key), "--name-outputs", "hash"]
    res = deid(*args, "--ocr-min-confidence", "99.9")
    assert res.exit_code == 3
    listing = sorted(p.name for p in out.iterdir())
    assert not any("Quackenbush" in n for n in listing)
    assert sum(n.endswith(".docx") for n in listing) == 1 and sum(n.endswith(".png") for n in listing) == 1
    summary_text = (out / "summary.json").read_text("utf-8") + (out / "report.jsonl").read_text("utf-8")
    assert "Quackenbush" not in summary_text and "Quackenbush" not in res.output
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    [warning] = summary["warnings"]
    assert "OCR mean confidence" in warning["warning"] and "below 100" in warning["warning"]
    # --resume reads again only what failed (a document is read in its worker, as part of its task: the
    # documents already done are skipped unread)
    assert deid(*args, "--resume").exit_code == 3
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["skipped"] == 2
    assert summary["runs"][-1]["done"] == 0 and summary["runs"][-1]["failed"] == 1
    # --overwrite removes the earlier run's document outputs with its texts
    (src / "Quackenbush-scan.png").unlink()
    assert deid(*args, "--overwrite").exit_code == 3
    assert sum(p.suffix == ".png" for p in out.iterdir()) == 0


@pytest.mark.skipif(
    shutil.which("soffice") is None or shutil.which("antiword") is None,
    reason="LibreOffice (to write a .doc) or antiword is not installed (Debian libreoffice-writer-nogui, antiword)",
)
def test_word97_doc_is_read_through_antiword_and_deidentified(tmp_path: Path, key: Path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    word97_doc(src / "old.doc", LINES)
    extracted = extract(src / "old.doc", "en")
    assert extracted.method == "doc-antiword" and all(line in extracted.text for line in LINES)
    res = deid(str(src), "-o", str(out), "-l", "en", "--key-file", str(key))
    assert res.exit_code == 0, res.output
    _no_phi((out / "old.doc.txt").read_text("utf-8"), "old.doc text")
    rebuilt = extract(out / "old.doc.docx", "en")
    _no_phi(rebuilt.text, "old.doc as DOCX")
    assert LINES[3] in rebuilt.text
    report = json.loads((out / "report.jsonl").read_text("utf-8").splitlines()[0])
    assert report["extraction"]["method"] == "doc-antiword"
