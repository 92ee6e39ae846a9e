"""What extraction hands to the rest of clinideid: the text, and where each piece of it came from.

Offsets are character offsets into ``ExtractedDocument.text`` (the text the pipeline de-identifies); each
``WordBox`` (PDF and image pages) and ``DocxUnit`` (DOCX text elements) maps a range of them back to the
source, which is what the format outputs (``ingest.outputs``) use to put replacements in place or to burn
out the boxes of words that overlap PHI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: below this mean word confidence (0-100) an OCR'd page is reported with a warning
DEFAULT_MIN_CONFIDENCE = 60.0
#: render and OCR resolution (dots per inch)
DEFAULT_DPI = 300
#: size limits checked before decompressing (``ingest.bounds``); 0 turns one off
DEFAULT_MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_ZIP_RATIO = 100.0
DEFAULT_MAX_PAGES = 2_000
#: an image frame or a rendered page holds at most this many pixels (a letter page at 300 dpi: 8.4 million)
DEFAULT_MAX_PIXELS = 100_000_000


@dataclass(frozen=True)
class IngestOptions:
    """How documents are read: OCR resolution, the confidence under which a page gets a warning, the
    Tesseract language packs (``None``: from the document's language, or every supported pack) and the
    size limits checked before anything is decompressed (``ingest.bounds``; 0: no limit)."""

    dpi: int = DEFAULT_DPI
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    ocr_languages: str | None = None
    min_text_chars: int = 20  # a PDF page with fewer non-blank characters in its text layer is OCR'd
    max_unzipped_bytes: int = DEFAULT_MAX_UNZIPPED_BYTES  # DOCX, ODT: all parts together, uncompressed
    max_zip_ratio: float = DEFAULT_MAX_ZIP_RATIO  # DOCX, ODT: a large part's uncompressed / compressed size
    max_pages: int = DEFAULT_MAX_PAGES  # PDF pages, image frames
    max_pixels: int = DEFAULT_MAX_PIXELS  # per image frame; a PDF page is rendered at fewer dots to fit


@dataclass(frozen=True, slots=True)
class WordBox:
    """A word on a page: its offsets in the text and its box as fractions of the page (left, top, right,
    bottom; 0-1, origin top left), so any rendering resolution can use it."""

    start: int
    end: int
    page: int  # 0-based
    box: tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class DocxUnit:
    """One text element of a DOCX (``w:t`` or ``w:delText``): the part it lies in, its position among the
    text elements of that part (in ``ingest.docx``'s traversal order) and its offsets in the text."""

    part: str
    index: int
    start: int
    end: int


@dataclass
class PageInfo:
    """One page (or image frame): how its text was obtained and, for OCR, the mean word confidence."""

    number: int  # 1-based
    method: str  # "pdf-text" or "ocr"
    ocr_confidence: float | None = None
    words: int = 0


@dataclass
class ExtractedDocument:
    """The text of one source file and the map back to it.

    ``kind`` says which format output is written (``docx``, ``pdf``, ``image``, or ``text`` for formats
    whose de-identified version is a new DOCX); ``method`` how the text was obtained (``docx``,
    ``pdf-text``, ``ocr``, ``pdf-text+ocr``, ``doc-antiword``, ``rtf``, ``odt``).
    """

    source: Path
    kind: str
    method: str
    text: str
    language: str | None = None
    ocr_languages: str | None = None
    pages: list[PageInfo] = field(default_factory=list)
    boxes: list[WordBox] = field(default_factory=list)
    units: list[DocxUnit] = field(default_factory=list)
    image_format: str | None = None  # the Pillow format of an image input (its output keeps it)
    dpi: int = DEFAULT_DPI
    warnings: list[str] = field(default_factory=list)
    digest: str | None = None  # SHA-256 of the source when read: its output is made from the same bytes
    options: IngestOptions = field(
        default_factory=IngestOptions
    )  # how it was read: its output keeps the limits

    def summary(self) -> dict[str, Any]:
        """What goes into the document's report (no text)."""
        out: dict[str, Any] = {"method": self.method, "pages": len(self.pages) or None}
        ocr = [p for p in self.pages if p.method == "ocr"]
        if ocr:
            out["ocr_languages"] = self.ocr_languages
            out["ocr_pages"] = [p.number for p in ocr]
            out["ocr_confidence"] = {str(p.number): p.ocr_confidence for p in ocr}
        return out
