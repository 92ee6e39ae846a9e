"""JSON Lines: clinideid's native, lossless format, plus the common variants other tools write.

Native, one document per line (every ``Document`` and ``Span`` field, so write -> read is identical)::

    {"id": "d1", "text": "...", "language": "es", "metadata": {...},
     "spans": [{"start": 0, "end": 4, "label": "PATIENT", "text": "Juan", "source": "gold", "score": null,
                "explanation": null, "fragments": [], "id": "T1", "attributes": {}}]}

Also read (detected per line, no option needed):

- EDS-Pseudo: ``{"note_id", "note_text", "entities": [{"start", "end", "label"}]}``;
- spaCy-like: ``{"text", "spans" | "entities" | "ents": [{"start", "end", "label"}]}`` (``spans`` may be a
  dict of span groups; the group name goes to ``span.attributes["span_group"]``);
- Presidio-like objects (``full_text``, ``entity_type``/``start_position``/``end_position``).

Top-level keys the format does not know go into ``document.metadata``, unknown span keys into
``span.attributes``, so nothing is dropped. A file whose first character is ``[`` is read as one JSON
list of such objects. ``path`` may also be a folder of ``.jsonl`` files. Line terminators: only ``\\n``
separates records (U+2028, U+2029 and U+0085 are written escaped).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    encode_text,
    list_files,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register

_ID_KEYS = ("id", "note_id", "doc_id", "document_id")
_TEXT_KEYS = ("text", "note_text", "full_text")
_SPAN_LIST_KEYS = ("spans", "entities", "ents")
_START_KEYS = ("start", "start_position", "start_char", "begin")
_END_KEYS = ("end", "end_position", "end_char")
_LABEL_KEYS = ("label", "entity_type", "type", "tag")
_SPAN_TEXT_KEYS = ("text", "entity_value")
_SPAN_FIELDS = ("source", "score", "explanation", "fragments", "id", "attributes")
_TOP_KNOWN = {*_ID_KEYS, *_TEXT_KEYS, *_SPAN_LIST_KEYS, "language", "lang", "metadata"}
_UNSAFE_LINE_CHARS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps_line(obj: Any) -> str:
    """``obj`` as one JSON line that no line splitter can break."""
    line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    for raw, escaped in _UNSAFE_LINE_CHARS.items():
        line = line.replace(raw, escaped)
    return line


def _first(obj: Mapping[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    for k in keys:
        if k in obj:
            return k, obj[k]
    return None, None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def span_from_obj(
    obj: Any, *, path: str, line: int | None, group: str | None = None, label_key: str | None = None
) -> Span:
    """A ``Span`` from one span object of any supported variant."""
    if not isinstance(obj, Mapping):
        raise FormatError("a span must be a JSON object", path=path, line=line)
    sk, start = _first(obj, _START_KEYS)
    ek, end = _first(obj, _END_KEYS)
    lk, label = (label_key, obj.get(label_key)) if label_key else _first(obj, _LABEL_KEYS)
    if not (_is_int(start) and _is_int(end)):
        raise FormatError("a span needs integer 'start' and 'end' offsets", path=path, line=line)
    if not isinstance(label, str) or not label:
        raise FormatError("a span needs a non-empty string 'label'", path=path, line=line)
    tk, text = _first(obj, _SPAN_TEXT_KEYS)
    if text is not None and not isinstance(text, str):
        raise FormatError("a span's 'text' must be a string", path=path, line=line)
    fields: dict[str, Any] = {}
    for name in _SPAN_FIELDS:
        if obj.get(name) is not None:
            fields[name] = obj[name]
    attributes = dict(fields.pop("attributes", None) or {})
    if not isinstance(obj.get("attributes", {}) or {}, Mapping):
        raise FormatError("a span's 'attributes' must be an object", path=path, line=line)
    used = {sk, ek, lk, tk, *_SPAN_FIELDS}
    for k, v in obj.items():
        if k not in used and k not in attributes:
            attributes[k] = v
    if group is not None:
        attributes.setdefault("span_group", group)
    if "score" in fields:
        score = fields["score"]
        if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
            raise FormatError("a span's 'score' must be a number", path=path, line=line)
    if "fragments" in fields:
        frags = fields["fragments"]
        if not isinstance(frags, list) or not all(
            isinstance(f, list | tuple) and len(f) == 2 and all(_is_int(x) for x in f) for f in frags
        ):
            raise FormatError(
                "a span's 'fragments' must be a list of [start, end] pairs", path=path, line=line
            )
        fields["fragments"] = tuple((int(a), int(b)) for a, b in frags)
    for name in ("source", "explanation", "id"):
        if name in fields and not isinstance(fields[name], str):
            raise FormatError(f"a span's {name!r} must be a string", path=path, line=line)
    return make_span(start, end, label, path=path, line=line, text=text, attributes=attributes, **fields)


def _spans_of(obj: Mapping[str, Any], *, path: str, line: int | None) -> list[Span]:
    key, raw = _first(obj, _SPAN_LIST_KEYS)
    if raw is None:
        return []
    if isinstance(raw, Mapping):  # spaCy span groups: {"sc": [...], ...}
        out = []
        for group, items in raw.items():
            if not isinstance(items, list):
                raise FormatError(f"span group {group!r} must be a list", path=path, line=line)
            out.extend(span_from_obj(s, path=path, line=line, group=str(group)) for s in items)
        return out
    if not isinstance(raw, list):
        raise FormatError(f"{key!r} must be a list of span objects", path=path, line=line)
    return [span_from_obj(s, path=path, line=line) for s in raw]


def document_parts(
    obj: Any, *, path: str, line: int | None, fallback_id: str
) -> tuple[str, str, str | None, dict[str, Any], list[Span]]:
    """``(id, text, language, metadata, spans)`` of one document object of any supported variant."""
    if not isinstance(obj, Mapping):
        raise FormatError("each record must be a JSON object", path=path, line=line)
    _, text = _first(obj, _TEXT_KEYS)
    if not isinstance(text, str):
        raise FormatError(
            f"a record needs a string text field (one of {', '.join(_TEXT_KEYS)})", path=path, line=line
        )
    _, doc_id = _first(obj, _ID_KEYS)
    if doc_id is None or doc_id == "":
        doc_id = fallback_id
    elif not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
        raise FormatError("a record's id must be a string or an integer", path=path, line=line)
    _, language = _first(obj, ("language", "lang"))
    if language is not None and not isinstance(language, str):
        raise FormatError("a record's 'language' must be a string", path=path, line=line)
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise FormatError("a record's 'metadata' must be an object", path=path, line=line)
    metadata = dict(metadata)
    for k, v in obj.items():
        if k not in _TOP_KNOWN and k not in metadata:
            metadata[k] = v
    return str(doc_id), text, language, metadata, _spans_of(obj, path=path, line=line)


def span_to_obj(s: Span) -> dict[str, Any]:
    return {
        "start": s.start,
        "end": s.end,
        "label": s.label,
        "text": s.text,
        "source": s.source,
        "score": s.score,
        "explanation": s.explanation,
        "fragments": [list(f) for f in s.fragments],
        "id": s.id,
        "attributes": dict(s.attributes),
    }


def document_to_obj(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "text": doc.text,
        "language": doc.language,
        "metadata": dict(doc.metadata),
        "spans": [span_to_obj(s) for s in doc.spans],
    }


@register
class JsonlCodec(Codec):
    name = "jsonl"
    description = "JSON Lines, one document per line (native and EDS-Pseudo/spaCy-like variants)"
    folder = False

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        reject_unknown(self.name, options)
        require_exists(path)
        ctx = ReadContext(self.name, opts, report)
        files = list_files(path, ".jsonl", recursive=False) if path.is_dir() else [path]
        try:
            for file in files:
                yield from self._read_file(file, ctx)
        finally:
            ctx.close()

    def _records(self, file: Path, ctx: ReadContext) -> Iterator[tuple[int | None, str, Any]]:
        """``(line, label for messages, parsed object)``; a bad line raises (or is skipped)."""
        where = str(file)
        raw = read_text(file, ctx.options.encoding).removeprefix("\ufeff")
        if raw.lstrip().startswith("["):
            try:
                items = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise FormatError(
                    f"malformed JSON ({exc.msg}, column {exc.colno})", path=where, line=exc.lineno
                ) from None
            if not isinstance(items, list):
                raise FormatError("a JSON file must hold a list of records", path=where)
            for i, item in enumerate(items):
                yield None, f"item {i}", item
            return
        for lineno, line in enumerate(raw.split("\n"), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                ctx.fail(
                    FormatError(f"malformed JSON ({exc.msg}, column {exc.colno})", path=where, line=lineno)
                )
                continue
            yield lineno, f"line {lineno}", obj

    def _read_file(self, file: Path, ctx: ReadContext) -> Iterator[Document]:
        where = str(file)
        for n, (lineno, label, obj) in enumerate(self._records(file, ctx)):
            try:
                doc_id, text, language, metadata, spans = document_parts(
                    obj, path=where, line=lineno, fallback_id=f"{file.stem}-{n}"
                )
                doc = ctx.document(
                    doc_id,
                    text,
                    spans,
                    path=where if lineno is None else f"{where}:{lineno}",
                    metadata=metadata,
                    language=language,
                )
            except FormatError as exc:
                if lineno is None and exc.line is None:
                    exc = FormatError(f"{label}: {exc}")
                ctx.fail(exc)
                continue
            yield doc

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        options.pop("report", None)
        reject_unknown(self.name, options)
        docs = list(docs)
        if path.is_dir():
            raise FormatError("jsonl writes one file; give a file path, not a folder", path=str(path))
        chunks = []
        for doc in docs:
            try:
                line = dumps_line(document_to_obj(doc))
            except (TypeError, ValueError):
                raise FormatError(
                    f"document {doc.id!r}: metadata or span attributes hold values JSON cannot store "
                    "(only strings, numbers, booleans, null, lists and objects)"
                ) from None
            chunks.append(encode_text(line + "\n", doc_id=doc.id))
        write_bytes(path, b"".join(chunks))
