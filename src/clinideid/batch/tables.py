"""De-identify tables (SQL query results, CSV, Parquet) row by row, writing each batch of rows exactly once.

A *source* yields ``SourceRow``s (a row's values, or why it could not be read); ``process_row`` turns each into
a ``RowOutcome`` (the de-identified row plus its report entry, or a PHI-free failure); a *sink* writes whole
batches atomically (one SQL transaction, or one part file followed by its journal lines) and names the ids
already done, which a resumed run skips. One bad row never stops the batch; a run-wide problem (a missing
column, an unreachable database) stops it before anything is written.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from clinideid.batch.compute import Task, compute
from clinideid.batch.inputs import DEFAULT_MAX_BYTES, normalise_language
from clinideid.batch.limits import StopRequest, default_time_limit
from clinideid.batch.paths import display_id
from clinideid.batch.records import field_label
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, InputError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.text.decoding import check_text

log = logging.getLogger(__name__)

DEFAULT_BATCH_ROWS = 500
TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def missing_extra(extra: str, module: str) -> ConfigError:
    """The error for an optional dependency that is not installed, naming the extra that brings it."""
    return ConfigError(
        f"this needs the optional dependency {module!r}; install it with: pip install 'clinideid[{extra}]'"
    )


@dataclass(frozen=True)
class TableSpec:
    """Which columns hold the id, the texts to de-identify, the language and the patient id."""

    id_column: str
    text_columns: tuple[str, ...]
    language_column: str | None = None
    patient_column: str | None = None
    drop_other_columns: bool = False

    def check(self, columns: Sequence[str], where: str) -> None:
        """``ConfigError`` (a run-wide problem) when a named column is not among ``columns``."""
        if not self.text_columns:
            raise ConfigError("name the column(s) to de-identify with --text-column")
        if self.id_column in self.text_columns:
            raise ConfigError("--id-column cannot also be a --text-column")
        named = [self.id_column, *self.text_columns, self.language_column, self.patient_column]
        missing = [c for c in named if c is not None and c not in columns]
        if missing:
            shown = ", ".join(repr(c) for c in missing)
            raise ConfigError(f"{where} has no column {shown}; its columns are: {', '.join(columns)}")
        if len(set(columns)) != len(columns):
            raise ConfigError(f"{where} has two columns of the same name; rename them in the input")

    def output_columns(self, columns: Sequence[str]) -> list[str]:
        """The written columns, in input order: all of them, or only id, texts and language when dropping."""
        if not self.drop_other_columns:
            return list(columns)
        wanted = {self.id_column, *self.text_columns, self.language_column}
        return [c for c in columns if c in wanted]


@dataclass
class SourceRow:
    """One row of a table input: its values, or why it could not be read (1-based ``number``)."""

    number: int
    values: dict[str, Any] | None
    error: str | None = None


@dataclass
class RowOutcome:
    """A processed row: ``entry`` is its report (the shape of a journal entry); ``values`` the row to write."""

    id: str
    raw_id: Any
    entry: dict[str, Any]
    values: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.entry["status"] == "done"


@dataclass
class RowOptions:
    language: str | None = None  # fixed language for rows without a language column value (None: auto)
    max_bytes: int = DEFAULT_MAX_BYTES  # per text cell, in UTF-8 bytes
    time_limit: float | None = None  # seconds per row; None: the size-based default; 0: none


def row_id(row: SourceRow, spec: TableSpec) -> tuple[str, Any]:
    """``(printable id, raw id)`` of a row; rows without an id are named by their number."""
    raw = None if row.values is None else row.values.get(spec.id_column)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return f"row-{row.number}", None
    return display_id(str(raw)), raw


def _failed(doc_id: str, raw_id: Any, error: str, warnings: list[str] | None = None) -> RowOutcome:
    return RowOutcome(
        doc_id, raw_id, {"id": doc_id, "status": "failed", "error": error, "warnings": warnings or []}
    )


def process_row(
    row: SourceRow,
    spec: TableSpec,
    deid: MultilingualDeidentifier,
    options: RowOptions,
    columns: Sequence[str],
) -> RowOutcome:
    """De-identify every text column of one row together (one detection pass, shared surrogates)."""
    doc_id, raw_id = row_id(row, spec)
    where = f"row {row.number}"
    if row.error is not None:
        return _failed(doc_id, raw_id, row.error)
    assert row.values is not None
    values = row.values
    if raw_id is None:
        return _failed(doc_id, raw_id, f"{where}: empty id column; row not written")
    try:
        texts: list[tuple[str, str]] = []
        for col in spec.text_columns:
            value = values.get(col)
            if value is None:
                continue
            if not isinstance(value, str):
                raise InputError(f"{where}: column {col!r} holds {type(value).__name__}, not text")
            if (
                len(value) > options.max_bytes
                or len(value.encode("utf-8", "surrogatepass")) > options.max_bytes
            ):
                raise InputError(f"{where}: column {col!r} is over --max-bytes; raise it to process this row")
            check_text(value, f"{where}, column {col!r}")
            texts.append((col, value))
        language = options.language
        if spec.language_column is not None:
            language = normalise_language(values.get(spec.language_column), where) or language
        patient = values.get(spec.patient_column) if spec.patient_column else None
    except InputError as exc:
        return _failed(doc_id, raw_id, str(exc))
    out = {c: values.get(c) for c in spec.output_columns(columns)}
    warnings = [] if texts and any(t.strip() for _, t in texts) else ["empty text: written unchanged"]
    if not texts:
        report = {
            "id": doc_id,
            "language": language,
            "n_spans": 0,
            "n_dropped_overlaps": 0,
            "replacements": [],
        }
        entry = {
            "id": doc_id,
            "status": "done",
            "report": report,
            "chars": 0,
            "seconds": 0.0,
            "warnings": warnings,
        }
        return RowOutcome(doc_id, raw_id, entry, out)
    first_col, first_text = texts[0]
    chars = sum(len(t) for _, t in texts)
    limit = default_time_limit(chars) if options.time_limit is None else options.time_limit
    fields = [(field_label((col,)), text) for col, text in texts[1:]]
    try:
        doc = Document(doc_id, first_text, language)
    except ClinideidError as exc:
        return _failed(doc_id, raw_id, str(exc), warnings)
    outcome = compute(Task(doc, fields, None if patient is None else str(patient), limit), deid)
    if outcome.error is not None:
        log.warning("row %s failed: %s", doc_id, outcome.error)
        return _failed(doc_id, raw_id, outcome.error, warnings)
    if outcome.internal is not None:
        log.error("row %s failed with an internal error (%s)", doc_id, outcome.internal)
        return _failed(doc_id, raw_id, f"internal error ({outcome.internal})", warnings)
    result, field_results, seconds = outcome.result, outcome.field_results, outcome.seconds
    out[first_col] = result.text
    report = {**result.report(), "id": doc_id, "text_column": first_col, "audit": outcome.audit}
    report["fields"] = [
        {"field": col, "replacements": [r.to_dict() for r in reps]}
        for (col, _), (_, reps) in zip(texts[1:], field_results, strict=True)
        if reps
    ]
    for (col, _), (new, _) in zip(texts[1:], field_results, strict=True):
        out[col] = new
    entry = {
        "id": doc_id,
        "status": "done",
        "report": report,
        "chars": chars,
        "seconds": round(seconds, 4),
        "warnings": [*warnings, *result.warnings],
    }
    return RowOutcome(doc_id, raw_id, entry, out)


def replacements_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every replacement of a row's report: its first text column's and the other columns'."""
    out = list(report.get("replacements", ()))
    for f in report.get("fields", ()):
        out.extend(f.get("replacements", ()))
    return out


def count_by(report: dict[str, Any], key: str) -> dict[str, int]:
    return dict(sorted(Counter(r[key] for r in replacements_of(report)).items()))


class TableSource(Protocol):
    columns: list[str]
    description: str  # for messages: a file name or a masked database URL

    def rows(self) -> Iterable[SourceRow]: ...


class TableSink(Protocol):
    description: str

    def open(self, columns: Sequence[str]) -> set[str]:
        """Prepare the output; return the ids an earlier run finished (skipped by this one)."""
        ...

    def write_batch(self, outcomes: Sequence[RowOutcome]) -> None:
        """Write rows and their reports all together, or not at all."""
        ...

    def close(self, finished: bool, skipped: int) -> dict[str, Any]:
        """Finish the output (whatever this run managed) and return the summary of every run."""
        ...


@dataclass
class TableOutcome:
    summary: dict[str, Any]
    interrupted_by: str | None = None


@dataclass
class _Counts:
    skipped: int = 0
    seen: set[str] = field(default_factory=set)


def run_table(
    source: TableSource,
    spec: TableSpec,
    deid: MultilingualDeidentifier,
    sink: TableSink,
    options: RowOptions,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Callable[[int], None] | None = None,
) -> TableOutcome:
    """De-identify every row of ``source`` into ``sink``, ``batch_rows`` rows per atomic write."""
    if batch_rows < 1:
        raise ConfigError("--batch-size must be a positive number of rows")
    spec.check(source.columns, source.description)
    out_columns = spec.output_columns(source.columns)
    done = sink.open(out_columns)
    counts = _Counts()
    batch: list[RowOutcome] = []
    finished = False
    stop = StopRequest()
    try:
        with stop:
            for row in source.rows():
                if stop.requested:
                    break
                doc_id, raw_id = row_id(row, spec)
                if doc_id in done:
                    counts.skipped += 1
                    continue
                if raw_id is not None and doc_id in counts.seen:
                    # the first row of this id stays the one written; this one is reported under its own name
                    batch.append(
                        _failed(
                            f"{doc_id}#row-{row.number}", None, f"row {row.number}: duplicate id; not written"
                        )
                    )
                else:
                    counts.seen.add(doc_id)
                    batch.append(process_row(row, spec, deid, options, source.columns))
                if len(batch) >= batch_rows:
                    sink.write_batch(batch)
                    if progress is not None:
                        progress(len(batch))
                    batch = []
            else:
                finished = True
            if batch:
                sink.write_batch(batch)
                if progress is not None:
                    progress(len(batch))
    except BaseException:
        # what is written stays consistent; a second error while closing must not hide the first
        with contextlib.suppress(Exception):
            sink.close(False, counts.skipped)
        raise
    summary = sink.close(finished, counts.skipped)
    return TableOutcome(summary, None if finished else (stop.signal_name or "error"))
