"""Burning PHI out of page images: opaque boxes over every word that overlaps a replaced span.

The outputs are new files built from pixels only: a PDF of page images (no text layer, no metadata) or
an image re-encoded from its pixel data (no EXIF, XMP or text chunks).
"""

from __future__ import annotations

import bisect
import io
from collections.abc import Iterable, Sequence

from PIL import Image, ImageDraw

from clinideid.ingest.model import WordBox

#: each burned box grows by this fraction of its height on every side (glyph edges, OCR box slack)
MARGIN = 0.2
JPEG_QUALITY = 90


def phi_boxes(boxes: Sequence[WordBox], spans: Iterable[tuple[int, int]]) -> dict[int, list[WordBox]]:
    """The word boxes overlapping any ``(start, end)`` span, by page."""
    ordered = sorted(boxes, key=lambda b: b.start)
    starts = [b.start for b in ordered]
    out: dict[int, list[WordBox]] = {}
    for start, end in spans:
        if end <= start:
            continue
        i = max(0, bisect.bisect_right(starts, start) - 1)
        while i < len(ordered) and ordered[i].start < end:
            box = ordered[i]
            if box.end > start:
                out.setdefault(box.page, []).append(box)
            i += 1
    return out


def burn(image: Image.Image, boxes: Iterable[WordBox]) -> Image.Image:
    """A copy of ``image`` with a black rectangle over each box."""
    page = image.copy()
    draw = ImageDraw.Draw(page)
    width, height = page.size
    for b in boxes:
        left, top, right, bottom = b.box[0] * width, b.box[1] * height, b.box[2] * width, b.box[3] * height
        pad = max(2.0, (bottom - top) * MARGIN)
        draw.rectangle(
            (max(0, left - pad), max(0, top - pad), min(width, right + pad), min(height, bottom + pad)),
            fill=0,
        )
    return page


def pixels_only(image: Image.Image) -> Image.Image:
    """A new image holding only the pixels of ``image`` (no metadata of any kind carried over)."""
    mode = image.mode if image.mode in ("1", "L", "RGB") else "RGB"
    source = image.convert(mode)
    return Image.frombytes(mode, source.size, source.tobytes())


def pdf_of_pages(pages: Iterable[Image.Image], dpi: int) -> bytes:
    """An image-only PDF of ``pages`` (each a JPEG page, sized by ``dpi``), built page by page so only
    the compressed pages are held; no document information, text or XMP is written."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    try:
        for image in pages:
            jpeg = io.BytesIO()
            pixels_only(image).convert("RGB").save(jpeg, format="JPEG", quality=JPEG_QUALITY)
            jpeg.seek(0)
            width, height = image.width * 72 / dpi, image.height * 72 / dpi
            page = pdf.new_page(width, height)
            picture = pdfium.PdfImage.new(pdf)
            picture.load_jpeg(jpeg, inline=True)
            picture.set_matrix(pdfium.PdfMatrix().scale(width, height))
            page.insert_obj(picture)
            page.gen_content()
            page.close()
        out = io.BytesIO()
        pdf.save(out)
        return out.getvalue()
    finally:
        pdf.close()


def image_file(frames: Sequence[Image.Image], fmt: str, dpi: int) -> bytes:
    """``frames`` re-encoded in ``fmt`` (all frames for TIFF; PNG for formats Pillow cannot write)."""
    clean = [pixels_only(f) for f in frames]
    buf = io.BytesIO()
    if fmt == "TIFF":
        clean[0].save(buf, format="TIFF", save_all=True, append_images=clean[1:], compression="tiff_lzw")
    elif fmt == "JPEG":
        clean[0].save(buf, format="JPEG", quality=95)
    else:
        clean[0].save(buf, format="PNG")
    return buf.getvalue()
