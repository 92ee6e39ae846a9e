"""Formats read to plain text only: ``.doc`` (antiword), ``.rtf`` (striprtf), ``.odt`` (odfpy).

Their de-identified version is a new DOCX of the de-identified text (``ingest.outputs``); the original's
layout is not kept.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from clinideid.errors import InputError, ModelError
from clinideid.ingest.model import ExtractedDocument
from clinideid.text.decoding import decode_text

ANTIWORD_SECONDS = 120


def extract_doc(path: Path, language: str | None) -> ExtractedDocument:
    """Word 97-2003 text through ``antiword`` (Debian package ``antiword``)."""
    exe = shutil.which("antiword")
    if exe is None:
        raise ModelError("reading .doc files needs antiword: install the Debian package antiword")
    try:
        done = subprocess.run(
            [exe, "-m", "UTF-8.txt", "-w", "0", str(path)],
            capture_output=True,
            timeout=ANTIWORD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InputError(f"antiword took over {ANTIWORD_SECONDS} s; not read") from None
    if done.returncode != 0:
        raise InputError("not a Word 97-2003 document antiword can read; not read")
    text = done.stdout.decode("utf-8", "replace")
    return ExtractedDocument(path, "text", "doc-antiword", text, language)


def extract_rtf(path: Path, language: str | None) -> ExtractedDocument:
    from striprtf.striprtf import rtf_to_text

    raw = path.read_bytes()
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise InputError("not an RTF document; not read")
    try:
        text = rtf_to_text(decode_text(raw, "RTF", "latin-1"), errors="replace")
    except MemoryError:  # the caller reports it with the memory limit
        raise
    except Exception as exc:  # striprtf raises plain exceptions on malformed input
        raise InputError(f"not a readable RTF document ({type(exc).__name__}); not read") from None
    return ExtractedDocument(path, "text", "rtf", text, language)


def extract_odt(path: Path, language: str | None) -> ExtractedDocument:
    from odf import teletype
    from odf.namespaces import TEXTNS
    from odf.opendocument import load

    try:
        document = load(str(path))
    except MemoryError:  # the caller reports it with the memory limit
        raise
    except Exception as exc:  # zip and XML errors of a damaged file
        raise InputError(f"not a readable ODT document ({type(exc).__name__}); not read") from None
    wanted = {(TEXTNS, "p"), (TEXTNS, "h")}
    lines: list[str] = []

    def walk(node) -> None:  # paragraphs and headings in document order, tables and lists included
        for child in node.childNodes:
            if getattr(child, "qname", None) in wanted:
                lines.append(teletype.extractText(child))
            elif child.nodeType == child.ELEMENT_NODE:
                walk(child)

    walk(document.text)
    return ExtractedDocument(path, "text", "odt", "\n".join(lines), language)
