"""Documents in, documents out: text extraction from DOCX, DOC, RTF, ODT, PDF and images (OCR), with
offsets back to the source, and de-identified versions of them in their own format.

``extract`` picks the reader by file suffix; ``ingest.outputs`` writes the de-identified document.
The readers need the ``documents`` extra (python-docx, pypdfium2, Pillow, striprtf, odfpy) and, for scans
and images, the ``tesseract`` program with its language packs; ``.doc`` needs ``antiword``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from clinideid.errors import InputError
from clinideid.ingest.model import DocxUnit, ExtractedDocument, IngestOptions, PageInfo, WordBox

#: suffix (lower case) -> reader kind
DOCUMENT_SUFFIXES = {
    ".docx": "docx",
    ".doc": "doc",
    ".rtf": "rtf",
    ".odt": "odt",
    ".pdf": "pdf",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
}
#: reader kinds whose files are zips (their sizes are checked before anything is inflated)
ZIP_KINDS = ("docx", "odt")

__all__ = [
    "DOCUMENT_SUFFIXES",
    "DocxUnit",
    "ExtractedDocument",
    "IngestOptions",
    "PageInfo",
    "WordBox",
    "extract",
]


def extract(
    path: Path, language: str | None = None, options: IngestOptions | None = None
) -> ExtractedDocument:
    """The text of ``path`` with its map back to the source; ``InputError`` for a file that cannot be
    read, ``ModelError`` when a needed library or program is missing."""
    from clinideid.extras import missing_extra

    options = options or IngestOptions()
    kind = DOCUMENT_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"unsupported document type ({path.suffix.lower() or 'no extension'})")
    try:
        digest = file_digest(path)  # before reading: a change while it is read shows at output time
        if kind in ZIP_KINDS:
            from clinideid.ingest.bounds import check_zip

            check_zip(path, options)
        doc = _checked(_read(kind, path, language, options), options)
        doc.digest = digest
        doc.options = options
        return doc
    except ModuleNotFoundError as exc:
        error = missing_extra(exc, f"reading {path.suffix.lower()} files")
        if error is None:
            raise
        raise error from None


def file_digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _read(kind: str, path: Path, language: str | None, options: IngestOptions) -> ExtractedDocument:
    if kind == "docx":
        from clinideid.ingest.docx import extract_docx

        return extract_docx(path, language)
    if kind == "pdf":
        from clinideid.ingest.pdf import extract_pdf

        return extract_pdf(path, language, options)
    if kind == "image":
        from clinideid.ingest.image import extract_image

        return extract_image(path, language, options)
    from clinideid.ingest import legacy

    reader = {"doc": legacy.extract_doc, "rtf": legacy.extract_rtf, "odt": legacy.extract_odt}[kind]
    return reader(path, language)


def _checked(doc: ExtractedDocument, options: IngestOptions) -> ExtractedDocument:
    """Warnings for pages whose OCR confidence is below the threshold, or that gave no text at all."""
    for page in doc.pages:
        if page.method != "ocr":
            continue
        if page.ocr_confidence is None:
            doc.warnings.append(f"page {page.number}: OCR found no text; check the output by hand")
        elif page.ocr_confidence < options.min_confidence:
            doc.warnings.append(
                f"page {page.number}: OCR mean confidence {page.ocr_confidence:.0f} is below "
                f"{options.min_confidence:.0f}; PHI may be misread: check the output by hand"
            )
    return doc
