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
offsets exact; the tags are read with the standard XML parser. ``comment`` <-> ``span.attributes["note"]``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from html import unescape
from pathlib import Path
from typing import Any

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
_TEXT_OPEN = re.compile(r"<TEXT(\s[^>]*)?(/?)>")
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


def _raw_text_content(raw: str, path: str) -> str:
    """The exact content of the first ``<TEXT>`` element, from the raw file (no newline normalisation)."""
    m = _TEXT_OPEN.search(raw)
    if m is None:
        raise FormatError("has no <TEXT> element", path=path)
    if m.group(2):
        return ""
    pos = m.end()
    parts: list[str] = []
    while True:
        if raw.startswith("<![CDATA[", pos):
            end = raw.find("]]>", pos)
            if end < 0:
                raise FormatError("unterminated CDATA section in <TEXT>", path=path)
            parts.append(raw[pos + 9 : end])
            pos = end + 3
        elif raw.startswith("</TEXT", pos):
            return "".join(parts)
        elif raw.startswith("<!--", pos):
            end = raw.find("-->", pos)
            if end < 0:
                raise FormatError("unterminated comment in <TEXT>", path=path)
            pos = end + 3
        elif raw.startswith("<", pos):
            raise FormatError("unexpected markup inside <TEXT>; i2b2 TEXT holds only text", path=path)
        elif pos >= len(raw):
            raise FormatError("unterminated <TEXT> element", path=path)
        else:
            nxt = min((i for i in (raw.find("<", pos), raw.find("&", pos)) if i >= 0), default=len(raw))
            if nxt == pos:  # a reference
                ref = _REF.match(raw, pos)
                if ref is None:
                    raise FormatError("malformed character reference in <TEXT>", path=path)
                parts.append(unescape(ref.group()))
                pos = ref.end()
            else:
                parts.append(raw[pos:nxt])
                pos = nxt


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
        if root.find("TEXT") is None:
            raise FormatError("has no <TEXT> element under the root", path=where)
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
