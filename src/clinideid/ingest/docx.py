"""DOCX in and out: text of every story (body with nested tables and text boxes, headers, footers,
comments, footnotes, endnotes) mapped to its ``w:t`` elements, and replacements written back into them.

The text and the write-back walk the parts and their elements in one order (``_stories``), so a
``DocxUnit``'s (part, index) finds the same element in a freshly opened copy of the file. Only the text of
text elements changes: runs keep their formatting; a replacement that spans several runs goes into the
first and the rest of the span is removed from the others.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from clinideid.errors import InputError
from clinideid.ingest.model import DocxUnit, ExtractedDocument

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_P, _T, _DEL, _TAB, _BR, _CR = (f"{{{W}}}{n}" for n in ("p", "t", "delText", "tab", "br", "cr"))
_WML = "application/vnd.openxmlformats-officedocument.wordprocessingml."
STORY_TYPES = {
    _WML + t + "+xml"
    for t in ("document.main", "template.main", "header", "footer", "comments", "footnotes", "endnotes")
} | {
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
}
_HYPERLINK = f"{{{W}}}hyperlink"
_RID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
PART_SEPARATOR = "\n\n"
#: attributes naming people (comment and tracked-change authors, co-authoring ids), emptied on output
PERSON_ATTRIBUTES = ("author", "initials", "userId", "providerId")


def _open(path_or_bytes: Path | bytes):
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        source = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else str(path_or_bytes)
        return docx.Document(source)
    except (PackageNotFoundError, KeyError, ValueError, etree.XMLSyntaxError, OSError) as exc:
        raise InputError(f"not a readable DOCX file ({type(exc).__name__}); not read") from None
    except MemoryError:  # the caller reports it with the memory limit
        raise
    except Exception as exc:  # zipfile.BadZipFile and friends
        raise InputError(f"not a readable DOCX file ({type(exc).__name__}); not read") from None


class _Story:
    """One XML part holding text; ``save`` writes a part that python-docx keeps as bytes back."""

    def __init__(self, part) -> None:
        self.part = part
        self.name = str(part.partname)
        self._parsed = not hasattr(part, "element")
        self.root = etree.fromstring(part.blob) if self._parsed else part.element

    def save(self) -> None:
        if self._parsed:
            self.part._blob = etree.tostring(
                self.root, xml_declaration=True, encoding="UTF-8", standalone=True
            )


def _stories(document) -> list[_Story]:
    parts = [p for p in document.part.package.iter_parts() if p.content_type in STORY_TYPES]
    main = document.part.partname
    parts.sort(key=lambda p: (p.partname != main, str(p.partname)))
    return [_Story(p) for p in parts]


def _own_content(p: etree._Element) -> Iterator[etree._Element]:
    """The elements of paragraph ``p`` in order, not descending into paragraphs nested in it (a text
    box's paragraphs are visited on their own)."""
    for child in p:
        if not isinstance(child.tag, str):
            continue
        if child.tag == _P:
            continue
        yield child
        yield from _own_content(child)


def _walk(story: _Story) -> Iterator[tuple[str, etree._Element | None]]:
    """``(text, element)`` pieces of a story: text elements with themselves, separators with None."""
    for p in story.root.iter(_P):
        for el in _own_content(p):
            if el.tag in (_T, _DEL):
                yield el.text or "", el
            elif el.tag == _TAB:
                yield "\t", None
            elif el.tag in (_BR, _CR):
                yield "\n", None
        yield "\n", None


def _layout(stories: list[_Story]) -> tuple[str, list[tuple[DocxUnit, etree._Element]]]:
    pieces: list[str] = []
    units: list[tuple[DocxUnit, etree._Element]] = []
    pos = 0
    for n, story in enumerate(stories):
        if n:
            pieces.append(PART_SEPARATOR)
            pos += len(PART_SEPARATOR)
        index = 0
        for text, el in _walk(story):
            if el is not None:
                units.append((DocxUnit(story.name, index, pos, pos + len(text)), el))
                index += 1
            pieces.append(text)
            pos += len(text)
    return "".join(pieces), units


def extract_docx(path: Path, language: str | None) -> ExtractedDocument:
    stories = _stories(_open(path))
    text, units = _layout(stories)
    return ExtractedDocument(path, "docx", "docx", text, language, units=[u for u, _ in units])


def deidentified_docx(source: Path, edits: list[tuple[int, int, str]]) -> bytes:
    """``source`` with each ``(start, end, replacement)`` of the extracted text applied in its text
    elements, people's names removed from comments and tracked changes, document properties cleared."""
    document = _open(source)
    stories = _stories(document)
    _, units = _layout(stories)
    changed = _apply(units, sorted(edits))
    for story in stories:
        _unlink_changed(story, changed)
        _clear_people(story.root)
        story.save()
    clear_properties(document)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _apply(units: list[tuple[DocxUnit, etree._Element]], edits: list[tuple[int, int, str]]) -> set:
    """Each edit's replacement goes into the first text element it overlaps; the others lose their part.
    Returns the elements changed."""
    placed: set[int] = set()
    changed = set()
    for unit, el in units:
        text = el.text or ""
        local = []
        for k, (start, end, new) in enumerate(edits):
            if end <= unit.start or start >= unit.end:
                if start >= unit.end:
                    break
                continue
            a, b = max(start, unit.start) - unit.start, min(end, unit.end) - unit.start
            local.append((a, b, "" if k in placed else new))
            placed.add(k)
        if not local:
            continue
        for a, b, new in reversed(local):
            text = text[:a] + new + text[b:]
        el.text = text
        el.set(XML_SPACE, "preserve")
        changed.add(el)
    return changed


def _unlink_changed(story: _Story, changed: set) -> None:
    """A hyperlink whose text held PHI loses its target (a mailto: address, a URL with a name in it): the
    link becomes plain text and its relationship is dropped."""
    for link in story.root.iter(_HYPERLINK):
        rel_id = link.get(_RID)
        if rel_id is None or not any(t in changed for t in link.iter(_T)):
            continue
        del link.attrib[_RID]
        if rel_id in story.part.rels:
            del story.part.rels[rel_id]


def _clear_people(root: etree._Element) -> None:
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in list(el.attrib):
            if etree.QName(attr).localname in PERSON_ATTRIBUTES:
                el.set(attr, "")


def clear_properties(document) -> None:
    """Empty the core properties (author, last modified by, title, ...); drop the extended, custom and
    thumbnail parts (company, manager, custom fields, a picture of the first page)."""
    props = document.core_properties
    for name in (
        "author",
        "category",
        "comments",
        "content_status",
        "identifier",
        "keywords",
        "language",
        "last_modified_by",
        "subject",
        "title",
        "version",
    ):
        setattr(props, name, "")
    props.revision = 1
    for el in list(props._element):  # dates of writing and printing the document
        if etree.QName(el).localname in ("created", "modified", "lastPrinted"):
            props._element.remove(el)
    package = document.part.package
    for rel_id, rel in list(package.rels.items()):
        if rel.reltype.rsplit("/", 1)[-1] in ("extended-properties", "custom-properties", "thumbnail"):
            del package.rels[rel_id]
    people = [
        (part, rel_id)
        for part in package.iter_parts()
        for rel_id, rel in part.rels.items()
        if rel.reltype.endswith("/people")
    ]
    for part, rel_id in people:
        del part.rels[rel_id]
