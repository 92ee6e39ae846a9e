"""PDF text extraction with pypdfium2: the text layer with word boxes, and OCR for pages without one.

A page whose text layer holds fewer than ``IngestOptions.min_text_chars`` non-blank characters (a scan,
or a scanned page inside a mixed PDF) is rendered at ``IngestOptions.dpi`` and OCR'd.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image

from clinideid.errors import InputError
from clinideid.ingest.bounds import check_pages
from clinideid.ingest.model import DEFAULT_MAX_PIXELS, ExtractedDocument, IngestOptions, PageInfo, WordBox
from clinideid.ingest.ocr import ocr_image, ocr_languages, words_to_text

PAGE_SEPARATOR = "\n\n"


@contextmanager
def open_pdf(path: Path) -> Iterator:
    """A pypdfium2 document; an unreadable or encrypted file is the document's ``InputError``."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        reason = "password protected" if "password" in str(exc).lower() else "not a readable PDF"
        raise InputError(f"{reason}; not read") from None
    try:
        yield pdf
    finally:
        pdf.close()


def render_page(pdf, index: int, dpi: int, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Page ``index`` as RGB pixels at ``dpi``, or fewer dots on a page so large that it would exceed
    ``max_pixels`` (0: no limit; word boxes are fractions of the page, so any resolution lines up)."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = dpi / 72
        if max_pixels:
            scale = min(scale, math.sqrt(max_pixels / max(1.0, width * height)))
        return page.render(scale=scale).to_pil().convert("RGB")
    finally:
        page.close()


def _text_layer(pdf, index: int) -> tuple[str, list[tuple[int, int, tuple[float, float, float, float]]]]:
    """The page's characters one by one (so offsets and boxes agree), and its words as
    ``(start, end, box)`` relative to the page text."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    textpage = page.get_textpage()
    try:
        width, height = page.get_size()
        chars: list[str] = []
        boxes: list[tuple[float, float, float, float] | None] = []
        n = textpage.count_chars()
        i = 0
        while i < n:
            code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
            if 0xD800 <= code < 0xDC00 and i + 1 < n:  # a surrogate pair: one character, two indices
                low = pdfium_c.FPDFText_GetUnicode(textpage.raw, i + 1)
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                i += 1
            ch = chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else " "
            chars.append(ch)
            if ch.isspace():
                boxes.append(None)
            else:
                left, bottom, right, top = textpage.get_charbox(i, loose=True)
                boxes.append((left / width, 1 - top / height, right / width, 1 - bottom / height))
            i += 1
    finally:
        textpage.close()
        page.close()
    keep = [j for j in range(len(chars)) if not (chars[j] == "\r" and chars[j + 1 : j + 2] == ["\n"])]
    if len(keep) < len(chars):  # PDFium ends lines with CRLF: plain newlines, as in every other text
        chars, boxes = [chars[j] for j in keep], [boxes[j] for j in keep]
    words = []
    start = None
    for j, box in enumerate([*boxes, None]):
        if box is not None and start is None:
            start = j
        elif box is None and start is not None:
            parts = [b for b in boxes[start:j] if b is not None]
            union = (
                min(b[0] for b in parts),
                min(b[1] for b in parts),
                max(b[2] for b in parts),
                max(b[3] for b in parts),
            )
            words.append((start, j, union))
            start = None
    return "".join(chars), words


def extract_pdf(path: Path, language: str | None, options: IngestOptions) -> ExtractedDocument:
    """Text and word boxes of every page (text layer or OCR)."""
    texts: list[str] = []
    boxes: list[WordBox] = []
    pages: list[PageInfo] = []
    langs = ocr_languages(language, options.ocr_languages)
    offset = 0
    with open_pdf(path) as pdf:
        check_pages(len(pdf), options)
        for index in range(len(pdf)):
            if index:
                texts.append(PAGE_SEPARATOR)
                offset += len(PAGE_SEPARATOR)
            text, words = _text_layer(pdf, index)
            if sum(not c.isspace() for c in text) >= options.min_text_chars:
                texts.append(text)
                boxes.extend(WordBox(offset + a, offset + b, index, box) for a, b, box in words)
                pages.append(PageInfo(index + 1, "pdf-text", None, len(words)))
            else:
                image = render_page(pdf, index, options.dpi, options.max_pixels)
                ocr = ocr_image(image, langs, options.dpi)
                text, page_boxes = words_to_text(ocr.words, index, offset)
                texts.append(text)
                boxes.extend(page_boxes)
                pages.append(PageInfo(index + 1, "ocr", ocr.mean_confidence, len(ocr.words)))
            offset += len(text)
    methods = {p.method for p in pages}
    method = "pdf-text+ocr" if len(methods) > 1 else (methods.pop() if methods else "pdf-text")
    doc = ExtractedDocument(
        path,
        "pdf",
        method,
        "".join(texts),
        language,
        langs if "ocr" in method else None,
        pages,
        boxes,
        dpi=options.dpi,
    )
    return doc
