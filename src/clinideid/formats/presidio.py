"""Presidio research's synthetic data set: one JSON list of samples.

::

    [{"full_text": "...", "masked": "... {{PERSON}} ...",
      "spans": [{"entity_type": "PERSON", "entity_value": "...", "start_position": 8, "end_position": 12}],
      "template_id": 87, "metadata": null}, ...]

Labels are Presidio's entity types as written (map them with ``load_mapping("presidio_synth")``).
Samples have no id: a document is ``<file stem>-<index>`` unless its ``metadata`` holds ``doc_id``, which
is where the writer stores the id (with ``language``), so write -> read keeps ids. ``masked`` is derived
from the spans and rebuilt on write; other top-level keys and metadata entries go to
``document.metadata`` and back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    encode_text,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register
from clinideid.formats.jsonl import span_from_obj

#: sample fields Presidio's ``InputSample`` keeps at the top level
_TOP_LEVEL = ("template_id", "tokens", "tags", "scheme", "create_tags_from_span")


def masked_text(doc: Document) -> str:
    """The text with each span replaced by ``{{LABEL}}`` (a span overlapping an earlier one is skipped)."""
    out: list[str] = []
    pos = 0
    for s in doc.spans:
        if s.start < pos:
            continue
        out.append(doc.text[pos : s.start])
        out.append("{{" + s.label + "}}")
        pos = s.end
    out.append(doc.text[pos:])
    return "".join(out)


@register
class PresidioCodec(Codec):
    name = "presidio"
    description = "Presidio synthetic data set: a JSON list of {full_text, spans[entity_type, ...]}"
    folder = False

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        reject_unknown(self.name, options)
        require_exists(path)
        if path.is_dir():
            raise FormatError("presidio reads one JSON file, not a folder", path=str(path))
        where = str(path)
        ctx = ReadContext(self.name, opts, report)
        try:
            items = json.loads(read_text(path, opts.encoding).removeprefix("\ufeff"))
        except json.JSONDecodeError as exc:
            raise FormatError(
                f"malformed JSON ({exc.msg}, column {exc.colno})", path=where, line=exc.lineno
            ) from None
        if not isinstance(items, list):
            raise FormatError("a Presidio data set must be a JSON list of samples", path=where)
        try:
            for i, item in enumerate(items):
                try:
                    doc = self._read_item(item, i, path, ctx)
                except FormatError as exc:
                    ctx.fail(exc)
                    continue
                yield doc
        finally:
            ctx.close()

    def _read_item(self, item: Any, i: int, path: Path, ctx: ReadContext) -> Document:
        where = f"{path} (sample {i})"
        if not isinstance(item, Mapping) or not isinstance(item.get("full_text"), str):
            raise FormatError(f"sample {i} needs a string 'full_text'", path=str(path))
        raw_spans = item.get("spans") or []
        if not isinstance(raw_spans, list):
            raise FormatError(f"sample {i}: 'spans' must be a list", path=str(path))
        spans: list[Span] = []
        for obj in raw_spans:
            try:
                spans.append(span_from_obj(obj, path=where, line=None, label_key="entity_type"))
            except FormatError as exc:
                raise FormatError(str(exc)) from None
        meta_in = item.get("metadata") or {}
        if not isinstance(meta_in, Mapping):
            raise FormatError(f"sample {i}: 'metadata' must be an object or null", path=str(path))
        metadata = {k: v for k, v in meta_in.items() if k not in ("doc_id", "language")}
        for k, v in item.items():
            if k not in ("full_text", "spans", "masked", "metadata"):
                metadata.setdefault(k, v)
        doc_id = meta_in.get("doc_id")
        language = meta_in.get("language")
        return ctx.document(
            str(doc_id) if doc_id not in (None, "") else f"{path.stem}-{i}",
            item["full_text"],
            spans,
            path=where,
            metadata=metadata,
            language=language if isinstance(language, str) else None,
        )

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        reject_unknown(self.name, options)
        docs = list(docs)
        for doc in docs:
            for s in doc.spans:
                if s.is_discontinuous:
                    warn_write(
                        report,
                        f"document {doc.id!r}: discontinuous span {s.start}-{s.end} ({s.label}) written as "
                        f"{len(s.fragments)} separate spans",
                    )
        if path.is_dir():
            raise FormatError("presidio writes one JSON file; give a file path, not a folder", path=str(path))
        chunks = []
        for doc in docs:
            meta = {k: v for k, v in doc.metadata.items() if k not in _TOP_LEVEL}
            meta["doc_id"] = doc.id
            if doc.language:
                meta["language"] = doc.language
            sample: dict[str, Any] = {
                "full_text": doc.text,
                "masked": masked_text(doc),
                "spans": [
                    {
                        "entity_type": s.label,
                        "entity_value": doc.text[a:b],
                        "start_position": a,
                        "end_position": b,
                    }
                    for s in doc.spans
                    for a, b in s.pieces
                ],
            }
            sample.update({k: doc.metadata[k] for k in _TOP_LEVEL if k in doc.metadata})
            sample["metadata"] = meta
            try:
                text = json.dumps(sample, ensure_ascii=False, indent=4)
            except (TypeError, ValueError):
                raise FormatError(f"document {doc.id!r}: metadata holds values JSON cannot store") from None
            chunks.append(encode_text(text, doc_id=doc.id))
        write_bytes(path, b"[\n" + b",\n".join(chunks) + b"\n]\n")
