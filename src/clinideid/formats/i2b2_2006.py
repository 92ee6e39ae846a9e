"""i2b2 2006 de-identification XML: one file, inline PHI tags.

::

    <ROOT>
    <RECORD ID="1">
    <TEXT>
    Seen by Dr. <PHI TYPE="DOCTOR">Smith</PHI> on <PHI TYPE="DATE">01/02</PHI>.
    </TEXT>
    </RECORD>
    </ROOT>

A document's text is the TEXT content with the tags removed; span offsets point into it. Labels are the
2006 types as written (PATIENT, DOCTOR, HOSPITAL, LOCATION, DATE, ID, PHONE, AGE): map them to the
canonical scheme with ``load_mapping("i2b2_2006")``. Inline tags cannot overlap, so writing overlapping
spans is an error; discontinuous spans are written one tag per fragment (with a warning).

The file is parsed with the standard XML parser, which turns raw ``\\r\\n`` into ``\\n`` (offsets are
computed on the parsed text, so they stay consistent); the writer stores carriage returns as ``&#13;``
so that texts written by clinideid come back exactly.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span, find_overlaps
from clinideid.errors import FormatError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    check_xml_chars,
    encode_text,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
    xml_attr,
    xml_text,
)
from clinideid.formats.base import Codec, ReadReport, register
from clinideid.formats.i2b2 import parse_xml


@register
class I2b2_2006Codec(Codec):
    name = "i2b2_2006"
    description = "i2b2 2006 XML: one file of <RECORD ID><TEXT> with inline <PHI TYPE> tags"
    folder = False

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        reject_unknown(self.name, options)
        require_exists(path)
        if path.is_dir():
            raise FormatError("i2b2_2006 reads one XML file, not a folder", path=str(path))
        ctx = ReadContext(self.name, opts, report)
        where = str(path)
        root = parse_xml(read_text(path, opts.encoding), where)
        records = list(root.iter("RECORD"))
        if not records and root.tag != "RECORD":
            raise FormatError("has no <RECORD> elements", path=where)
        if root.tag == "RECORD":
            records = [root]
        try:
            for n, record in enumerate(records, 1):
                try:
                    doc = self._read_record(record, n, path, ctx)
                except FormatError as exc:
                    ctx.fail(exc)
                    continue
                yield doc
        finally:
            ctx.close()

    def _read_record(self, record: ET.Element, n: int, path: Path, ctx: ReadContext) -> Document:
        where = str(path)
        doc_id = record.get("ID") or f"{path.stem}-{n}"
        text_el = record.find("TEXT")
        if text_el is None:
            raise FormatError(f"record {doc_id!r} has no <TEXT> element", path=where)
        parts: list[str] = [text_el.text or ""]
        length = len(parts[0])
        spans: list[Span] = []
        for child in text_el:
            inner = "".join(child.itertext())
            if child.tag != "PHI":
                ctx.warn(f"{where}: record {doc_id!r}: <{child.tag}> inside TEXT read as plain text")
            elif len(child):
                ctx.warn(f"{where}: record {doc_id!r}: nested tags inside a PHI tag read as its text")
            if child.tag == "PHI":
                label = child.get("TYPE")
                if not label:
                    raise FormatError(f"record {doc_id!r}: a <PHI> tag has no TYPE attribute", path=where)
                if inner:
                    spans.append(make_span(length, length + len(inner), label, path=where))
                else:
                    ctx.warn(f"{where}: record {doc_id!r}: empty <PHI TYPE={label!r}> at {length} skipped")
            parts.append(inner)
            parts.append(child.tail or "")
            length += len(inner) + len(child.tail or "")
        return ctx.document(doc_id, "".join(parts), spans, path=where)

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        reject_unknown(self.name, options)
        docs = list(docs)
        if path.is_dir():
            raise FormatError("i2b2_2006 writes one XML file; give a file path, not a folder", path=str(path))
        chunks = [b'<?xml version="1.0" encoding="UTF-8"?>\n<ROOT>\n']
        for doc in docs:
            chunks.append(encode_text(self.format_record(doc, report=report) + "\n", doc_id=doc.id))
        chunks.append(b"</ROOT>\n")
        write_bytes(path, b"".join(chunks))

    @staticmethod
    def format_record(doc: Document, *, report: ReadReport | None = None) -> str:
        check_xml_chars(doc.text, doc_id=doc.id)
        check_xml_chars(doc.id, doc_id=doc.id, what="the id")
        pieces: list[Span] = []
        for s in doc.spans:
            if s.is_discontinuous:
                warn_write(
                    report,
                    f"document {doc.id!r}: discontinuous span {s.start}-{s.end} ({s.label}) written as "
                    f"{len(s.fragments)} separate PHI tags",
                )
            pieces.extend(Span(a, b, s.label) for a, b in s.pieces)
        overlaps = find_overlaps(pieces)
        if overlaps:
            a, b = overlaps[0]
            raise FormatError(
                f"document {doc.id!r}: spans {a.start}-{a.end} ({a.label}) and {b.start}-{b.end} ({b.label}) "
                "overlap; inline i2b2 2006 tags cannot overlap (resolve the spans first, e.g. with "
                "clinideid.resolve.resolve_spans)"
            )
        text = doc.text
        body: list[str] = []
        pos = 0
        for s in sorted(pieces, key=lambda p: p.start):
            body.append(xml_text(text[pos : s.start]))
            body.append(f'<PHI TYPE="{xml_attr(s.label)}">{xml_text(text[s.start : s.end])}</PHI>')
            pos = s.end
        body.append(xml_text(text[pos:]))
        return f'<RECORD ID="{xml_attr(doc.id)}">\n<TEXT>{"".join(body)}</TEXT>\n</RECORD>'
