"""BRAT standoff: a folder of ``NAME.txt`` + ``NAME.ann`` pairs (document id = ``NAME``).

Read:
- ``T`` lines become spans, discontinuous ones (``T1 LABEL 0 5;9 14``) with ``fragments``; span ids are
  kept (``span.id == "T1"``). Fragments separated only by line breaks are merged back into one span
  (``merge_line_fragments``), because that is how BRAT stores a selection across lines.
- ``#`` AnnotatorNotes go to ``span.attributes["note"]`` (several notes on one span: joined by ``\\n``);
  ``A``/``M`` attributes to ``span.attributes["brat_attributes"]`` (``{name: value or True}``).
- Relations, events, normalisations and other lines are kept verbatim in
  ``document.metadata["brat_extra"]`` (and written back), with one warning per document.
- ``.txt`` is read exactly (``\\r\\n`` and a BOM stay, offsets count them), UTF-8 unless ``encoding``.
- ``path`` may be the folder, one ``.ann`` file or one ``.txt`` file (a ``.txt`` without ``.ann`` is a
  document without spans). ``recursive=True`` also reads sub-folders (ids become ``sub/NAME``).

Write: ``.txt`` byte-exact; ``.ann`` with the span ids kept when they are unique ``T<n>`` ids (others get
fresh ones), the covered text after the offsets (fragments joined by a space). A span crossing a line
break is written as fragments split at the break, as BRAT does, so no ``.ann`` line is ever broken.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats._common import (
    LINE_BREAK_RUN,
    LINE_BREAKS,
    ReadContext,
    ReadOptions,
    check_unique_ids,
    doc_id_from,
    doc_relpath,
    encode_text,
    flatten_line,
    list_files,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register

_T_ID = re.compile(r"T\d+")
_LABEL_OK = re.compile(r"[^\s]+")


def _parse_fragments(spec: str, *, path: str, line: int) -> list[tuple[int, int]]:
    frags = []
    for part in spec.split(";"):
        bits = part.split()
        if len(bits) != 2 or not all(b.isdigit() for b in bits):
            raise FormatError(
                "malformed offsets in a T line (expected 'START END[;START END]')", path=path, line=line
            )
        frags.append((int(bits[0]), int(bits[1])))
    return frags


def _merge_line_fragments(text: str, frags: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join consecutive fragments whose gap is only line-break characters."""
    merged = [frags[0]]
    for a, b in frags[1:]:
        pa, pb = merged[-1]
        gap = text[pb:a] if pb <= a <= len(text) else None
        if gap and all(c in LINE_BREAKS for c in gap):
            merged[-1] = (pa, b)
        else:
            merged.append((a, b))
    return merged


def _split_at_line_breaks(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` cut at interior runs of line breaks; edge line breaks stay in the edge pieces."""
    pieces = []
    a = start
    for m in LINE_BREAK_RUN.finditer(text, start, end):
        if m.start() > start and m.end() < end:
            pieces.append((a, m.start()))
            a = m.end()
    pieces.append((a, end))
    return pieces


@register
class BratCodec(Codec):
    name = "brat"
    description = "BRAT standoff: folder of NAME.txt + NAME.ann"
    folder = True

    # ------------------------------------------------------------------ read
    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        recursive = bool(options.pop("recursive", False))
        merge = bool(options.pop("merge_line_fragments", True))
        reject_unknown(self.name, options)
        require_exists(path)
        ctx = ReadContext(self.name, opts, report)
        try:
            for doc_id, txt, ann in self._pairs(path, recursive):
                try:
                    doc = self._read_one(doc_id, txt, ann, ctx, merge)
                except FormatError as exc:
                    ctx.fail(exc)
                    continue
                yield doc
        finally:
            ctx.close()

    def _pairs(self, path: Path, recursive: bool) -> Iterator[tuple[str, Path | None, Path | None]]:
        if path.is_file():
            if path.suffix not in (".ann", ".txt"):
                raise FormatError("a BRAT path must be a folder, a .ann file or a .txt file", path=str(path))
            txt, ann = path.with_suffix(".txt"), path.with_suffix(".ann")
            yield path.stem, txt if txt.exists() else None, ann if ann.exists() else None
            return
        txts = list_files(path, ".txt", recursive)
        anns = {doc_id_from(p, path, ".ann"): p for p in list_files(path, ".ann", recursive)}
        ids = {doc_id_from(p, path, ".txt"): p for p in txts}
        for doc_id in sorted(set(ids) | set(anns)):
            yield doc_id, ids.get(doc_id), anns.get(doc_id)

    def _read_one(
        self, doc_id: str, txt: Path | None, ann: Path | None, ctx: ReadContext, merge: bool
    ) -> Document:
        if txt is None:
            raise FormatError(
                "has no matching .txt file; BRAT needs the text next to the .ann", path=str(ann)
            )
        text = read_text(txt, ctx.options.encoding)
        if ann is None:
            return ctx.document(doc_id, text, [], path=str(txt))
        ann_path = str(ann)
        raw = read_text(ann, ctx.options.encoding).removeprefix("\ufeff")
        entities: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        notes: dict[str, list[str]] = {}
        attrs: dict[str, dict[str, Any]] = {}
        extra: list[str] = []
        pending_attrs: list[tuple[str, str, Any, str]] = []
        for lineno, line in enumerate(raw.split("\n"), 1):
            line = line.removesuffix("\r")
            if not line.strip():
                continue
            kind = line[0]
            if kind == "T":
                fields = line.split("\t", 2)
                if len(fields) < 2 or not fields[1].strip():
                    raise FormatError(
                        "malformed T line (expected 'ID<TAB>LABEL START END<TAB>TEXT')",
                        path=ann_path,
                        line=lineno,
                    )
                ann_id = fields[0]
                if ann_id in entities:
                    raise FormatError(f"duplicate annotation id {ann_id}", path=ann_path, line=lineno)
                label, _, spec = fields[1].strip().partition(" ")
                frags = _parse_fragments(spec, path=ann_path, line=lineno)
                entities[ann_id] = {
                    "label": label,
                    "frags": frags,
                    "text": fields[2] if len(fields) > 2 else None,
                    "line": lineno,
                }
                order.append(ann_id)
            elif kind == "#":
                fields = line.split("\t", 2)
                head = fields[1].split() if len(fields) > 1 else []
                if len(head) == 2 and head[0] == "AnnotatorNotes":
                    notes.setdefault(head[1], []).append(fields[2] if len(fields) > 2 else "")
                else:
                    extra.append(line)
            elif kind in "AM":
                fields = line.split("\t")
                head = fields[1].split() if len(fields) > 1 else []
                if len(head) in (2, 3):
                    value: Any = head[2] if len(head) == 3 else True
                    pending_attrs.append((head[1], head[0], value, line))
                else:
                    extra.append(line)
            else:
                extra.append(line)
        for target, name, value, original in pending_attrs:
            if target in entities:
                attrs.setdefault(target, {})[name] = value
            else:
                extra.append(original)
        orphans = sorted(set(notes) - set(entities))
        for target in orphans:
            for note in notes.pop(target):
                extra.append(f"#\tAnnotatorNotes {target}\t{note}")
        spans: list[Span] = []
        lines: list[int] = []
        for ann_id in order:
            e = entities[ann_id]
            frags = sorted(e["frags"])
            if merge and len(frags) > 1:
                frags = _merge_line_fragments(text, frags)
            extras: dict[str, Any] = {}
            if ann_id in notes:
                extras["note"] = "\n".join(notes[ann_id])
            if ann_id in attrs:
                extras["brat_attributes"] = attrs[ann_id]
            # after merging, the recorded text has a space where the line break is: the check of
            # recorded against actual text ignores whitespace differences
            span = make_span(
                frags[0][0],
                frags[-1][1],
                e["label"],
                path=ann_path,
                line=e["line"],
                text=e["text"],
                fragments=tuple(frags),
                id=ann_id,
                attributes=extras,
            )
            spans.append(span)
            lines.append(e["line"])
        metadata: dict[str, Any] = {}
        if extra:
            metadata["brat_extra"] = extra
            ctx.warn(
                f"{ann_path}: kept {len(extra)} relation/event/normalisation/other line(s) as "
                "metadata['brat_extra'], not as spans"
            )
        return ctx.document(doc_id, text, spans, path=ann_path, lines=lines, metadata=metadata)

    # ----------------------------------------------------------------- write
    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        reject_unknown(self.name, {k: v for k, v in options.items() if k != "report"})
        docs = list(docs)
        check_unique_ids(docs, self.name)
        if path.exists() and not path.is_dir():
            raise FormatError("BRAT output must be a folder", path=str(path))
        for doc in docs:
            rel = doc_relpath(doc.id, "")
            ann = self.format_ann(doc)
            write_bytes(path / f"{rel}.txt", encode_text(doc.text, doc_id=doc.id))
            write_bytes(path / f"{rel}.ann", encode_text(ann, doc_id=doc.id, what="annotation"))

    @staticmethod
    def format_ann(doc: Document) -> str:
        """The ``.ann`` content for ``doc``."""
        used: set[str] = set()
        ids: list[str | None] = []
        for s in doc.spans:
            sid = s.id if s.id is not None and _T_ID.fullmatch(s.id) and s.id not in used else None
            if sid:
                used.add(sid)
            ids.append(sid)
        extra = [str(line) for line in doc.metadata.get("brat_extra", ())]
        for line in extra:
            if any(c in LINE_BREAKS for c in line):
                raise FormatError(f"document {doc.id!r}: a metadata['brat_extra'] line holds a line break")
        taken = {line.split("\t", 1)[0] for line in extra}
        counter = 1
        out: list[str] = []
        notes: list[str] = []
        attr_lines: list[str] = []
        for s, sid in zip(doc.spans, ids, strict=True):
            if sid is None:
                while f"T{counter}" in used:
                    counter += 1
                sid = f"T{counter}"
                used.add(sid)
            if not _LABEL_OK.fullmatch(s.label):
                raise FormatError(
                    f"document {doc.id!r}: label {s.label!r} contains whitespace, which BRAT cannot store"
                )
            pieces = [p for a, b in s.pieces for p in _split_at_line_breaks(doc.text, a, b)]
            offsets = ";".join(f"{a} {b}" for a, b in pieces)
            covered = flatten_line(" ".join(doc.text[a:b] for a, b in pieces))
            out.append(f"{sid}\t{s.label} {offsets}\t{covered}")
            note = s.attributes.get("note")
            if note not in (None, ""):
                for part in str(note).splitlines() or [""]:
                    notes.append(f"{_fresh('#', taken)}\tAnnotatorNotes {sid}\t{flatten_line(part)}")
            for name, value in dict(s.attributes.get("brat_attributes") or {}).items():
                body = f"{name} {sid}" if value is True else f"{name} {sid} {value}"
                attr_lines.append(f"{_fresh('A', taken)}\t{flatten_line(body)}")
        lines = out + notes + attr_lines + extra
        return "".join(f"{line}\n" for line in lines)


def _fresh(prefix: str, taken: set[str]) -> str:
    """The first ``prefix<n>`` id not in ``taken`` (which it joins)."""
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    taken.add(f"{prefix}{n}")
    return f"{prefix}{n}"
