"""Hostile inputs for the limit tests, generated small: a zip bomb DOCX, a PDF of many pages, a pixel bomb
PNG, and a ``clinideid`` script with an operator that stalls beyond the reach of the time limit's alarm.

Nothing here holds a real person's data.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="word/document.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>'
    "</Relationships>"
)


def zip_bomb_docx(path: Path, inflated: int) -> Path:
    """A well-formed DOCX whose ``document.xml`` holds ``inflated`` bytes of blanks between two
    paragraphs: a few hundred bytes per megabyte once deflated. Written as a stream (never held whole)."""
    head = f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W}"><w:body>'
    head += "<w:p><w:r><w:t>Seen today in clinic.</w:t></w:r></w:p>"
    tail = "<w:p><w:r><w:t>Follow-up in two weeks.</w:t></w:r></w:p></w:body></w:document>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            part.write(head.encode())
            block = b" " * (1 << 20)
            left = inflated
            while left > 0:
                part.write(block[: min(left, len(block))])
                left -= len(block)
            part.write(tail.encode())
    return path


def many_pages_pdf(path: Path, pages: int, lines: int = 45) -> Path:
    """A PDF with a text layer of ``lines`` clinical-looking lines (no PHI) on each of ``pages`` pages."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    line = (
        "The patient was admitted with chest pain and treated with aspirin; discharged in stable condition."
    )
    for _ in range(pages):
        for i in range(lines):
            c.drawString(30, 800 - 17 * i, line)
        c.showPage()
    c.save()
    return path


def pixel_bomb_png(path: Path, width: int, height: int) -> Path:
    """A PNG header claiming ``width`` x ``height`` bilevel pixels, with a few rows of data: a tiny file
    whose decoding would need gigabytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + b"\xff" * ((width + 7) // 8)
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    data = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * 4, 9)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + data)
    return path


#: marks the document (or request) whose replacement stalls
STALL_MARKER = "STALL-HERE"

STALLING_SCRIPT = f'''
"""clinideid with one more operator: on a marked document it stalls with SIGALRM ignored, as native code
that never returns to Python would, so only a kill from outside can stop it."""
import signal

from clinideid.transform.base import Operator, register_operator


@register_operator
class StallOnMarker(Operator):
    name = "stall_on_marker"

    def replace(self, span, ctx):
        if "{STALL_MARKER}" in ctx.document.text:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                pass
        return "[" + span.label + "]"


if __name__ == "__main__":
    from clinideid.cli import main

    main()
'''


def stalling_script(folder: Path) -> Path:
    """The script above, written into ``folder``: run it as ``clinideid`` (workers import it too)."""
    script = folder / "clinideid_stalling.py"
    script.write_text(STALLING_SCRIPT, encoding="utf-8")
    return script
