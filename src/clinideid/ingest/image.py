"""Images (PNG, JPEG, TIFF with one or more pages) through Tesseract OCR."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence

from clinideid.errors import InputError
from clinideid.ingest.bounds import check_pages, check_pixels
from clinideid.ingest.model import ExtractedDocument, IngestOptions, PageInfo, WordBox
from clinideid.ingest.ocr import ocr_image, ocr_languages, words_to_text

PAGE_SEPARATOR = "\n\n"
_PILLOW_LIMIT = threading.Lock()


def _open(path: Path) -> Image.Image:
    """Open ``path`` (the header only) with Pillow's own pixel limit off: ``check_pixels`` applies ours,
    which the user can raise past Pillow's."""
    with _PILLOW_LIMIT:
        saved = Image.MAX_IMAGE_PIXELS
        Image.MAX_IMAGE_PIXELS = None
        try:
            return Image.open(path)
        finally:
            Image.MAX_IMAGE_PIXELS = saved


def image_frames(path: Path, options: IngestOptions | None = None) -> tuple[str, Iterator[Image.Image]]:
    """The Pillow format of ``path`` and its frames, upright (EXIF orientation applied), as RGB or L; each
    frame's pixels and the number of frames are checked against ``options`` before they are decoded."""
    options = options or IngestOptions()
    try:
        image = _open(path)
        check_pixels(image.size, options)
        check_pages(getattr(image, "n_frames", 1), options)
        image.load()
    except InputError:
        raise
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
        raise InputError("not a readable image; not read") from None
    fmt = image.format or "PNG"

    def frames() -> Iterator[Image.Image]:
        with image:
            for frame in ImageSequence.Iterator(image):
                check_pixels(frame.size, options)
                upright = ImageOps.exif_transpose(frame) or frame
                yield upright.convert("L" if upright.mode in ("1", "L", "I;16", "I", "F") else "RGB")

    return fmt, frames()


def extract_image(path: Path, language: str | None, options: IngestOptions) -> ExtractedDocument:
    fmt, frames = image_frames(path, options)
    langs = ocr_languages(language, options.ocr_languages)
    texts: list[str] = []
    boxes: list[WordBox] = []
    pages: list[PageInfo] = []
    offset = 0
    try:
        for index, frame in enumerate(frames):
            if index:
                texts.append(PAGE_SEPARATOR)
                offset += len(PAGE_SEPARATOR)
            ocr = ocr_image(frame, langs, _dpi(frame, options.dpi))
            text, page_boxes = words_to_text(ocr.words, index, offset)
            texts.append(text)
            boxes.extend(page_boxes)
            pages.append(PageInfo(index + 1, "ocr", ocr.mean_confidence, len(ocr.words)))
            offset += len(text)
    except (OSError, SyntaxError, ValueError):
        raise InputError("an image frame could not be decoded; not read") from None
    return ExtractedDocument(
        path, "image", "ocr", "".join(texts), language, langs, pages, boxes, image_format=fmt, dpi=options.dpi
    )


def _dpi(frame: Image.Image, default: int) -> int:
    """The image's own resolution when it states a plausible one (Tesseract sizes its models by it)."""
    dpi = frame.info.get("dpi")
    try:
        value = round(float(dpi[0])) if dpi else 0
    except (TypeError, ValueError):
        value = 0
    return value if 70 <= value <= 1200 else default
