"""i2b2 2014 de-identification XML (also MEDDOCAN's XML), one document per ``.xml`` file.

::

    <?xml version="1.0" encoding="UTF-8" ?>
    <deIdi2b2>
    <TEXT><![CDATA[...]]></TEXT>
    <TAGS>
    <NAME id="P0" start="16" end="20" text="..." TYPE="PATIENT" comment="" />
    </TAGS>
    </deIdi2b2>

The tag is the i2b2 category and ``TYPE`` the subcategory. MEDDOCAN's XML (``<MEDDOCAN>`` root, written
by its official format converter) keeps the same layout with its native types in ``TYPE`` under an
i2b2-like category tag: ``<NAME ... TYPE="NOMBRE_SUJETO_ASISTENCIA"/>``.

Labels: a tag/TYPE pair the canonical taxonomy knows becomes its canonical label (``NAME``/``PATIENT`` ->
``PATIENT``; also the i2b2 spellings ``LOCATION-OTHER``, ``IPADDRESS``, ``SOCIALSECURITY`` and stray
``PHI`` tags). Any other ``TYPE`` is kept as the label unchanged (``NOMBRE_SUJETO_ASISTENCIA``), with the
tag in ``span.attributes["i2b2_tag"]`` when it is not the one the writer would choose. Writing does the
reverse: canonical labels via ``canonical().to_i2b2``, MEDDOCAN types under the category tags of the
MEDDOCAN converter, any other label as ``<LABEL TYPE="LABEL">``.

Offsets are character offsets into the TEXT content. XML parsers normalise ``\\r\\n`` to ``\\n``, so the
TEXT content is read from the raw file (CDATA sections, character data and references), which keeps
offsets exact; the tags are read with the standard XML parser. The TEXT element is the one child of the
root named ``TEXT``, located by the XML parser (a ``<TEXT>`` inside a comment, a processing instruction,
a CDATA section or deeper in the tree is not it); a file with no such child or with several is a
``FormatError``. ``comment`` <-> ``span.attributes["note"]``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from html import unescape
from pathlib import Path
from typing import Any
from xml.parsers import expat

from clinideid.document import Document, Span
from clinideid.errors import FormatError, LabelError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    check_unique_ids,
    check_xml_chars,
    doc_id_from,
    doc_relpath,
    encode_text,
    list_files,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
    xml_attr,
)
from clinideid.formats.base import Codec, ReadReport, register
from clinideid.labels import canonical

#: i2b2 TYPE spellings that differ from the canonical taxonomy's ``type`` field
_TYPE_ALIASES = {
    "LOCATION-OTHER": "LOCATION_OTHER",
    "LOCATION_OTHER": "LOCATION_OTHER",
    "IPADDRESS": "IPADDR",
    "SOCIALSECURITY": "SSN",
}

#: MEDDOCAN native types -> XML category tag, from the official MEDDOCAN-Format-Converter-Script
#: (PlanTL-GOB-ES, mappings/brat_to_xml_map_categories.csv)
MEDDOCAN_CATEGORIES = {
    "NOMBRE_SUJETO_ASISTENCIA": "NAME",
    "NOMBRE_PERSONAL_SANITARIO": "NAME",
    "PROFESION": "PROFESSION",
    "HOSPITAL": "LOCATION",
    "INSTITUCION": "LOCATION",
    "CALLE": "LOCATION",
    "TERRITORIO": "LOCATION",
    "PAIS": "LOCATION",
    "CENTRO_SALUD": "LOCATION",
    "EDAD_SUJETO_ASISTENCIA": "AGE",
    "FECHAS": "DATE",
    "NUMERO_TELEFONO": "CONTACT",
    "NUMERO_FAX": "CONTACT",
    "CORREO_ELECTRONICO": "CONTACT",
    "URL_WEB": "CONTACT",
    "ID_ASEGURAMIENTO": "ID",
    "ID_CONTACTO_ASISTENCIAL": "ID",
    "NUMERO_BENEF_PLAN_SALUD": "ID",
    "IDENTIF_VEHICULOS_NRSERIE_PLACAS": "ID",
    "IDENTIF_DISPOSITIVOS_NRSERIE": "ID",
    "IDENTIF_BIOMETRICOS": "ID",
    "ID_SUJETO_ASISTENCIA": "ID",
    "ID_TITULACION_PERSONAL_SANITARIO": "ID",
    "ID_EMPLEO_PERSONAL_SANITARIO": "ID",
    "OTRO_NUMERO_IDENTIF": "ID",
    "SEXO_SUJETO_ASISTENCIA": "OTHER",
    "FAMILIARES_SUJETO_ASISTENCIA": "OTHER",
    "OTROS_SUJETO_ASISTENCIA": "OTHER",
    "DIREC_PROT_INTERNET": "OTHER",
}

_XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
#: a ``<TEXT ...>`` start tag (quoted attribute values may hold ``>``); group 1 is ``/`` when empty
_TEXT_START_TAG = re.compile(r"""<TEXT(?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*(/?)>""")
_REF = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|[A-Za-z]+);")


def label_from_tag(tag: str, type_: str | None) -> str:
    """The label for an i2b2 ``<tag TYPE="type_">``: canonical when known, else ``type_`` itself."""
    tax = canonical()
    tag_u = tag.upper()
    type_u = (type_ or tag).strip().upper()
    try:
        return tax.from_i2b2(tag_u, type_u)
    except LabelError:
        pass
    if type_u in _TYPE_ALIASES:
        return _TYPE_ALIASES[type_u]
    if tag_u in ("PHI", "") and type_u in tax:
        return type_u
    return (type_ or tag).strip()


def tag_for_label(label: str) -> tuple[str, str]:
    """The ``(tag, TYPE)`` the writer uses for ``label`` (see the module docstring)."""
    tax = canonical()
    if label in tax:
        return tax.to_i2b2(label)
    if label in MEDDOCAN_CATEGORIES:
        return MEDDOCAN_CATEGORIES[label], label
    return (label if _XML_NAME.fullmatch(label) else "PHI"), label


def _text_elements(raw: str, path: str) -> list[tuple[int, int, int]]:
    """``(line, content start, content end)`` of each ``TEXT`` child of the root, as character offsets
    into ``raw`` (start == end for an empty ``<TEXT/>``).

    The XML parser finds them, so a ``<TEXT>`` in a comment, a processing instruction, a CDATA section,
    a DOCTYPE or deeper in the tree is not taken for the document's text.
    """
    found: list[tuple[int, int, int]] = []
    depth = 0
    opened: list[tuple[int, int]] = []  # (line, byte offset of the start tag) of the open root-level TEXT
    parser = expat.ParserCreate()

    def start(name: str, _attrs: Any) -> None:
        nonlocal depth
        depth += 1
        if depth == 2 and name == "TEXT":
            opened.append((parser.CurrentLineNumber, parser.CurrentByteIndex))

    def end(name: str) -> None:
        nonlocal depth
        if depth == 2 and name == "TEXT" and opened:
            line, tag_at = opened.pop()
            found.append((line, tag_at, parser.CurrentByteIndex))
        depth -= 1

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(raw, True)
    except expat.ExpatError as exc:
        raise FormatError(
            f"is not well-formed XML ({expat.ErrorString(exc.code)})", path=path, line=exc.lineno
        ) from None
    if not found:
        return []
    data = raw.encode("utf-8", "surrogatepass")  # expat reports byte offsets into the UTF-8 text
    out = []
    for line, tag_at, end_at in found:
        tag_start = len(data[:tag_at].decode("utf-8", "surrogatepass"))
        end_start = len(data[:end_at].decode("utf-8", "surrogatepass"))
        m = _TEXT_START_TAG.match(raw, tag_start)
        if m is None:  # expat accepted it, so this does not happen
            raise FormatError("cannot locate the <TEXT> start tag", path=path, line=line)
        if m.group(1):  # <TEXT/>: the end event comes after the tag
            out.append((line, m.end(), m.end()))
        else:
            out.append((line, m.end(), end_start))
    return out


def _raw_text_content(raw: str, path: str) -> str:
    """The exact content of the ``TEXT`` child of the root, from the raw file (no newline normalisation).

    ``FormatError`` when the root has no ``TEXT`` child or more than one.
    """
    elements = _text_elements(raw, path)
    if not elements:
        raise FormatError(
            "has no <TEXT> element under the root element; an i2b2 file holds its document text in "
            "<TEXT> (a <TEXT> inside a comment or deeper in the tree does not count)",
            path=path,
        )
    if len(elements) > 1:
        raise FormatError(
            f"has {len(elements)} <TEXT> elements under the root element (lines "
            f"{', '.join(str(e[0]) for e in elements)}); an i2b2 file holds exactly one document text: "
            "split it into one file per document",
            path=path,
            line=elements[1][0],
        )
    _, pos, stop = elements[0]
    parts: list[str] = []
    while pos < stop:
        if raw.startswith("<![CDATA[", pos):
            end = raw.find("]]>", pos)
            if end < 0:
                raise FormatError("unterminated CDATA section in <TEXT>", path=path)
            parts.append(raw[pos + 9 : end])
            pos = end + 3
        elif raw.startswith("<!--", pos):
            end = raw.find("-->", pos)
            if end < 0:
                raise FormatError("unterminated comment in <TEXT>", path=path)
            pos = end + 3
        elif raw.startswith("<?", pos):
            end = raw.find("?>", pos)
            if end < 0:
                raise FormatError("unterminated processing instruction in <TEXT>", path=path)
            pos = end + 2
        elif raw.startswith("<", pos):
            raise FormatError("unexpected markup inside <TEXT>; i2b2 TEXT holds only text", path=path)
        elif raw.startswith("&", pos):
            ref = _REF.match(raw, pos)
            if ref is None:
                raise FormatError("malformed character reference in <TEXT>", path=path)
            parts.append(unescape(ref.group()))
            pos = ref.end()
        else:
            nxt = min(
                (i for i in (raw.find("<", pos, stop), raw.find("&", pos, stop)) if i >= 0), default=stop
            )
            parts.append(raw[pos:nxt])
            pos = nxt
    return "".join(parts)


def parse_xml(raw: str, where: str) -> ET.Element:
    """The root element of an XML document, or a located ``FormatError`` (no content quoted)."""
    try:
        return ET.fromstring(raw)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        reason = str(exc).split(":", 1)[0]  # "mismatched tag: line 1, column 9" -> "mismatched tag"
        raise FormatError(f"is not well-formed XML ({reason})", path=where, line=line) from None


def _cdata(text: str) -> str:
    """``text`` as CDATA section(s); a ``]]>`` inside is split across two sections."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


@register
class I2b2Codec(Codec):
    name = "i2b2"
    description = "i2b2 2014 / MEDDOCAN XML: folder of NAME.xml (<TEXT> CDATA + <TAGS>)"
    folder = True

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        recursive = bool(options.pop("recursive", False))
        reject_unknown(self.name, options)
        require_exists(path)
        ctx = ReadContext(self.name, opts, report)
        if path.is_file():
            files = [(path.stem, path)]
        else:
            files = [(doc_id_from(p, path, ".xml"), p) for p in list_files(path, ".xml", recursive)]
        try:
            for doc_id, file in files:
                try:
                    doc = self._read_one(doc_id, file, ctx)
                except FormatError as exc:
                    ctx.fail(exc)
                    continue
                yield doc
        finally:
            ctx.close()

    def _read_one(self, doc_id: str, file: Path, ctx: ReadContext) -> Document:
        where = str(file)
        raw = read_text(file, ctx.options.encoding)
        root = parse_xml(raw, where)
        text = _raw_text_content(raw, where)
        spans: list[Span] = []
        tags = root.find("TAGS")
        for el in tags if tags is not None else ():
            a = el.attrib
            if "start" not in a or "end" not in a:
                raise FormatError(f"tag <{el.tag}> has no start/end attributes", path=where)
            label = label_from_tag(el.tag, a.get("TYPE"))
            extras: dict[str, Any] = {}
            if a.get("comment"):
                extras["note"] = a["comment"]
            if tag_for_label(label)[0] != el.tag:
                extras["i2b2_tag"] = el.tag
            spans.append(
                make_span(
                    a["start"],
                    a["end"],
                    label,
                    path=where,
                    text=a.get("text"),
                    id=a.get("id"),
                    attributes=extras,
                )
            )
        return ctx.document(doc_id, text, spans, path=where)

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        root = str(options.pop("root", "deIdi2b2"))
        reject_unknown(self.name, options)
        if not _XML_NAME.fullmatch(root):
            raise FormatError(f"root element name {root!r} is not a valid XML name")
        docs = list(docs)
        check_unique_ids(docs, self.name)
        if path.exists() and not path.is_dir():
            raise FormatError("i2b2 output must be a folder", path=str(path))
        for doc in docs:
            rel = doc_relpath(doc.id, ".xml")
            write_bytes(
                path / rel, encode_text(self.format_xml(doc, root=root, report=report), doc_id=doc.id)
            )

    @staticmethod
    def format_xml(doc: Document, *, root: str = "deIdi2b2", report: ReadReport | None = None) -> str:
        check_xml_chars(doc.text, doc_id=doc.id)
        lines = [
            '<?xml version="1.0" encoding="UTF-8" ?>',
            f"<{root}>",
            f"<TEXT>{_cdata(doc.text)}</TEXT>",
            "<TAGS>",
        ]
        used_ids = {s.id for s in doc.spans if s.id}
        counter = 0
        seen: set[str] = set()
        for s in doc.spans:
            if s.is_discontinuous:
                warn_write(
                    report,
                    f"document {doc.id!r}: discontinuous span {s.start}-{s.end} ({s.label}) written as "
                    f"{len(s.fragments)} separate i2b2 tags",
                )
            tag = s.attributes.get("i2b2_tag")
            default_tag, type_ = tag_for_label(s.label)
            if not (
                isinstance(tag, str) and _XML_NAME.fullmatch(tag) and label_from_tag(tag, type_) == s.label
            ):
                tag = default_tag
            if label_from_tag(tag, type_) != s.label:
                tag = "PHI"
            if label_from_tag(tag, type_) != s.label:
                raise FormatError(f"document {doc.id!r}: label {s.label!r} cannot be stored in i2b2 XML")
            for k, (a, b) in enumerate(s.pieces):
                sid = s.id if s.id and k == 0 and s.id not in seen else None
                if sid is None:
                    while f"P{counter}" in used_ids or f"P{counter}" in seen:
                        counter += 1
                    sid = f"P{counter}"
                seen.add(sid)
                note = str(s.attributes.get("note") or "")
                check_xml_chars(note, doc_id=doc.id, what="a span note")
                lines.append(
                    f'<{tag} id="{xml_attr(sid)}" start="{a}" end="{b}" text="{xml_attr(doc.text[a:b])}" '
                    f'TYPE="{xml_attr(type_)}" comment="{xml_attr(note)}" />'
                )
        lines += ["</TAGS>", f"</{root}>"]
        return "\n".join(lines) + "\n"
