"""The de-identified version of a document in its own format, written beside the de-identified text.

- DOCX: the original with replacements in its text elements (``ingest.docx``);
- PDF: every page rendered, the words overlapping PHI burned out, saved as a new image-only PDF;
- images: the same, re-encoded in the input's format without metadata;
- DOC, RTF, ODT: a new DOCX of the de-identified text.
"""

from __future__ import annotations

from clinideid.batch.outputs import OutputWriter
from clinideid.errors import InputError
from clinideid.ingest.model import ExtractedDocument
from clinideid.pipeline import DeidResult

IMAGE_SUFFIXES = {"JPEG": ".jpg", "PNG": ".png", "TIFF": ".tif"}


def output_suffix(doc: ExtractedDocument) -> str:
    if doc.kind == "pdf":
        return ".pdf"
    if doc.kind == "image":
        return IMAGE_SUFFIXES.get(doc.image_format or "", ".png")
    return ".docx"


def format_output_name(out_id: str, suffix: str) -> str:
    """``out_id`` when it already ends with the output's suffix (a ``scan.pdf`` input), else with it added."""
    return out_id if out_id.lower().endswith(suffix) else out_id + suffix


def render_output(doc: ExtractedDocument, result: DeidResult) -> bytes:
    """The bytes of the de-identified document; ``InputError`` when the source changed since it was read
    (its text map would no longer fit)."""
    from clinideid.ingest import file_digest

    if doc.digest is not None and file_digest(doc.source) != doc.digest:
        raise InputError("the file changed while it was being de-identified; not written: run it again")
    if doc.kind == "docx":
        from clinideid.ingest.docx import deidentified_docx

        edits = [(r.start, r.end, result.text[r.new_start : r.new_end]) for r in result.replacements]
        return deidentified_docx(doc.source, edits)
    if doc.kind in ("pdf", "image"):
        return _burned(doc, [(r.start, r.end) for r in result.replacements])
    return text_docx(result.text)


def _burned(doc: ExtractedDocument, spans: list[tuple[int, int]]) -> bytes:
    from clinideid.ingest.bounds import check_pages
    from clinideid.ingest.burn import burn, image_file, pdf_of_pages, phi_boxes

    by_page = phi_boxes(doc.boxes, spans)
    if doc.kind == "pdf":
        from clinideid.ingest.pdf import open_pdf, render_page

        with open_pdf(doc.source) as pdf:
            check_pages(len(pdf), doc.options)
            pages = (
                burn(render_page(pdf, i, doc.dpi, doc.options.max_pixels), by_page.get(i, ()))
                for i in range(len(pdf))
            )
            return pdf_of_pages(pages, doc.dpi)
    from clinideid.ingest.image import image_frames

    fmt, frames = image_frames(doc.source, doc.options)
    burned = [burn(frame, by_page.get(i, ())) for i, frame in enumerate(frames)]
    return image_file(burned, fmt, doc.dpi)


def text_docx(text: str) -> bytes:
    """A DOCX with one paragraph per line of ``text`` and empty document properties."""
    import io

    import docx

    from clinideid.ingest.docx import clear_properties

    document = docx.Document()
    for line in text.split("\n"):
        document.add_paragraph(_xml_safe(line))
    clear_properties(document)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _xml_safe(line: str) -> str:
    """XML 1.0 forbids most control characters; a form feed or stray control becomes a space."""
    return "".join(c if c in "\t" or ord(c) >= 32 else " " for c in line)


def write_format_output(writer: OutputWriter, out_id: str, suffix: str, data: bytes) -> str:
    """Write the de-identified document (``render_output``'s bytes, with ``output_suffix``) atomically
    under the output folder; its relative path."""
    relpath = format_output_name(out_id, suffix)
    writer.target(relpath)  # refused when it would leave the output folder
    writer.write_file(relpath, data)
    return relpath
