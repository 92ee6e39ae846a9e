"""PhysioNet deid gold standard: records in ``id.text``, PHI in ``id-phi.phrase``.

``id.text`` holds records framed as::

    START_OF_RECORD=1||||2||||
    ...the note...
    ||||END_OF_RECORD

A record's text is everything between the line break that ends the ``START_OF_RECORD`` line and the
``||||END_OF_RECORD`` marker (read exactly, so it ends with the note's last line break); offsets count
from its first character. ``id-phi.phrase`` has one PHI per line, whitespace-separated::

    PATIENT RECORD START END TYPE PHRASE...

with end-exclusive character offsets (as read by nedap/deidentify's ``nursing2brat``; pass
``end_inclusive=True`` for files that count the last character). Documents are ``P<patient>-R<record>``
with ``metadata = {"patient": int, "record": int}``; labels are the file's types (``PTName``,
``HCPName``, ``DateYear``, ...): map them with ``load_mapping("physionet")``.

``path`` is the ``.text`` file (the phrase file is found next to it as ``<stem>-phi.phrase`` or
``<stem>.phrase``, or given with ``phrase=``), or a folder of ``.text`` files. Writing takes a ``.text``
path (or a folder, which gets ``id.text`` + ``id-phi.phrase``); a text that does not end with a line
break gets the end marker at the end of its last line, which this reader reads back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import FormatError
from clinideid.formats._common import (
    ReadContext,
    ReadOptions,
    check_unique_ids,
    encode_text,
    flatten_line,
    list_files,
    make_span,
    read_text,
    reject_unknown,
    require_exists,
    warn_write,
    write_bytes,
)
from clinideid.formats.base import Codec, ReadReport, register

_HEADER = re.compile(r"^START_OF_RECORD=(\d+)\|\|\|\|(\d+)\|\|\|\|[ \t]*(\r\n|\n|\r|$)", re.MULTILINE)
END_MARK = "||||END_OF_RECORD"
_DOC_ID = re.compile(r"P(\d+)-R(\d+)")


def doc_id_for(patient: int, record: int) -> str:
    return f"P{patient}-R{record}"


def _line_of(raw: str, pos: int) -> int:
    return raw.count("\n", 0, pos) + 1


def parse_records(raw: str, where: str) -> Iterator[tuple[int, int, str, int]]:
    """``(patient, record, text, line of the header)`` for each record of an ``id.text`` file."""
    pos = 0
    while True:
        m = _HEADER.search(raw, pos)
        if m is None:
            return
        start = m.end()
        end = raw.find(END_MARK, start)
        if end < 0:
            raise FormatError(
                "record has no ||||END_OF_RECORD marker", path=where, line=_line_of(raw, m.start())
            )
        nested = _HEADER.search(raw, start, end)
        if nested is not None:
            raise FormatError(
                "a START_OF_RECORD line inside a record (missing ||||END_OF_RECORD before it)",
                path=where,
                line=_line_of(raw, nested.start()),
            )
        yield int(m.group(1)), int(m.group(2)), raw[start:end], _line_of(raw, m.start())
        pos = end + len(END_MARK)


def _phrase_path(text_path: Path, explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    for candidate in (text_path.with_name(f"{text_path.stem}-phi.phrase"), text_path.with_suffix(".phrase")):
        if candidate.exists():
            return candidate
    return None


def _record_numbers(doc: Document) -> tuple[int, int] | None:
    m = _DOC_ID.fullmatch(doc.id)
    if m:
        return int(m.group(1)), int(m.group(2))
    p, r = doc.metadata.get("patient"), doc.metadata.get("record")
    if isinstance(p, int) and isinstance(r, int) and p >= 0 and r >= 0:
        return p, r
    return None


@register
class PhysionetCodec(Codec):
    name = "physionet"
    description = "PhysioNet deid gold standard: id.text records + id-phi.phrase PHI lines"
    folder = False

    def read(self, path: Path, *, report: ReadReport | None = None, **options: Any) -> Iterator[Document]:
        path = Path(path)
        opts = ReadOptions.take(options)
        phrase = options.pop("phrase", None)
        end_inclusive = bool(options.pop("end_inclusive", False))
        reject_unknown(self.name, options)
        require_exists(path)
        if path.is_dir():
            if phrase is not None:
                raise FormatError("phrase= needs a single .text file, not a folder", path=str(path))
            files = list_files(path, ".text", recursive=False)
        else:
            files = [path]
        ctx = ReadContext(self.name, opts, report)
        try:
            for file in files:
                yield from self._read_file(file, Path(phrase) if phrase else None, end_inclusive, ctx)
        finally:
            ctx.close()

    def _read_file(
        self, file: Path, phrase: Path | None, end_inclusive: bool, ctx: ReadContext
    ) -> Iterator[Document]:
        where = str(file)
        raw = read_text(file, ctx.options.encoding)
        records = list(parse_records(raw, where))
        if not records and raw.strip():
            raise FormatError("holds no START_OF_RECORD=P||||R|||| records", path=where)
        phrase_file = _phrase_path(file, phrase)
        by_record: dict[tuple[int, int], list[tuple[Span, int]]] = {}
        if phrase_file is None:
            ctx.warn(f"{where}: no -phi.phrase file next to it; documents have no spans")
        else:
            by_record = self._read_phrases(phrase_file, end_inclusive, ctx)
        known = {(p, r) for p, r, _, _ in records}
        for key in sorted(set(by_record) - known):
            first_line = by_record[key][0][1]
            ctx.fail(
                FormatError(
                    f"PHI for patient {key[0]} record {key[1]}, which {file.name} does not hold",
                    path=str(phrase_file),
                    line=first_line,
                )
            )
        seen: set[tuple[int, int]] = set()
        for patient, record, text, header_line in records:
            key = (patient, record)
            if key in seen:
                ctx.fail(
                    FormatError(
                        f"patient {patient} record {record} appears twice", path=where, line=header_line
                    )
                )
                continue
            seen.add(key)
            items = by_record.get(key, [])
            try:
                doc = ctx.document(
                    doc_id_for(patient, record),
                    text,
                    [s for s, _ in items],
                    path=str(phrase_file) if phrase_file else where,
                    lines=[line for _, line in items],
                    metadata={"patient": patient, "record": record},
                )
            except FormatError as exc:
                ctx.fail(exc)
                continue
            yield doc

    def _read_phrases(
        self, path: Path, end_inclusive: bool, ctx: ReadContext
    ) -> dict[tuple[int, int], list[tuple[Span, int]]]:
        where = str(path)
        out: dict[tuple[int, int], list[tuple[Span, int]]] = {}
        for lineno, line in enumerate(read_text(path, ctx.options.encoding).split("\n"), 1):
            line = line.removesuffix("\r")
            if not line.strip():
                continue
            fields = line.split(None, 5)
            if len(fields) < 5 or not all(f.isdigit() for f in fields[:4]):
                ctx.fail(
                    FormatError(
                        "malformed PHI line (expected 'PATIENT RECORD START END TYPE [PHRASE]')",
                        path=where,
                        line=lineno,
                    )
                )
                continue
            patient, record, start, end = (int(f) for f in fields[:4])
            phrase = fields[5] if len(fields) > 5 else None
            try:
                span = make_span(
                    start, end + 1 if end_inclusive else end, fields[4], path=where, line=lineno, text=phrase
                )
            except FormatError as exc:
                ctx.fail(exc)
                continue
            out.setdefault((patient, record), []).append((span, lineno))
        return out

    def write(self, docs: Iterable[Document], path: Path, **options: Any) -> None:
        path = Path(path)
        report = options.pop("report", None)
        reject_unknown(self.name, options)
        docs = list(docs)
        check_unique_ids(docs, self.name)
        if path.suffix == ".text":
            text_path = path
        elif path.exists() and not path.is_dir():
            raise FormatError("physionet output must be a .text file or a folder", path=str(path))
        else:
            text_path = path / "id.text"
        phrase_path = text_path.with_name(f"{text_path.stem}-phi.phrase")
        numbers: dict[str, tuple[int, int]] = {}
        used: set[tuple[int, int]] = set()
        for doc in docs:
            key = _record_numbers(doc)
            if key is not None:
                if key in used:
                    raise FormatError(
                        f"documents share patient {key[0]} record {key[1]}; PhysioNet needs them unique"
                    )
                used.add(key)
                numbers[doc.id] = key
        next_patient = max((p for p, _ in used), default=0) + 1
        text_chunks: list[bytes] = []
        phrase_chunks: list[bytes] = []
        for doc in docs:
            if doc.id not in numbers:
                numbers[doc.id] = (next_patient, 1)
                next_patient += 1
                warn_write(
                    report,
                    f"document {doc.id!r}: id is not P<patient>-R<record>; written as patient "
                    f"{numbers[doc.id][0]} record 1",
                )
            patient, record = numbers[doc.id]
            if END_MARK in doc.text or _HEADER.search(doc.text):
                raise FormatError(
                    f"document {doc.id!r}: text contains a PhysioNet record marker line "
                    f"(START_OF_RECORD=... or {END_MARK}), which would break the record framing"
                )
            text_chunks.append(
                encode_text(
                    f"START_OF_RECORD={patient}||||{record}||||\n{doc.text}{END_MARK}\n", doc_id=doc.id
                )
            )
            for s in doc.spans:
                if any(c.isspace() for c in s.label):
                    raise FormatError(f"document {doc.id!r}: label {s.label!r} contains whitespace")
                if s.is_discontinuous:
                    warn_write(
                        report,
                        f"document {doc.id!r}: discontinuous span {s.start}-{s.end} ({s.label}) written as "
                        f"{len(s.fragments)} PHI lines",
                    )
                for a, b in s.pieces:
                    phrase = flatten_line(doc.text[a:b])
                    phrase_chunks.append(
                        encode_text(f"{patient} {record} {a} {b} {s.label} {phrase}\n", doc_id=doc.id)
                    )
        write_bytes(text_path, b"".join(text_chunks))
        write_bytes(phrase_path, b"".join(phrase_chunks))
