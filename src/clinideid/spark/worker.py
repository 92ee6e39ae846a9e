"""Executor side of the Spark job: de-identify pandas batches of rows, one pipeline per Python process.

This module needs pandas but not pyspark, and is what ``mapInPandas`` runs on every executor. The pipeline
is built once per executor process and settings (a module-level cache keyed by a fingerprint of the
settings and of the key, never by the key itself) and reused by every task that process runs. Each row is
handled like one record of the folder runner (``clinideid.batch.runner``): the note and every other
string column are de-identified together, and a row that fails gets status ``failed`` and a reason that
holds no document text, while the rest of the batch goes on.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from clinideid.batch.compute import Task, compute
from clinideid.batch.inputs import DEFAULT_MAX_BYTES, normalise_language
from clinideid.batch.journal import settings_fingerprint
from clinideid.batch.limits import default_time_limit
from clinideid.batch.paths import display_id
from clinideid.batch.records import FieldPolicy, dotted, field_label, fields_to_deidentify
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.text.decoding import check_text

log = logging.getLogger(__name__)

#: bookkeeping columns the worker appends to every row; the driver splits them off into the report
STATUS = "_clinideid_status"
ERROR = "_clinideid_error"
REPORT = "_clinideid_report"
SPANS_PER_LABEL = "_clinideid_spans_per_label"
CHARS = "_clinideid_chars"
SECONDS = "_clinideid_seconds"
WARNINGS = "_clinideid_warnings"
#: most pipelines kept per process (one per distinct settings and key seen)
MAX_CACHED = 4


@dataclass(frozen=True)
class SparkDeidSettings:
    """Everything a worker needs to de-identify rows, except the key (which travels as a broadcast).

    ``config`` is a pipeline config as a plain dict (``PipelineConfig.model_dump()``) and ``overrides``
    the command-line overrides of ``MultilingualDeidentifier``. ``fields`` are the other string columns to
    de-identify with the note (in column order); ``corrupt_column`` is Spark's column for unparsable input
    lines (JSON, CSV), whose rows fail.
    """

    id_column: str
    text_column: str
    language: str = "auto"
    language_column: str | None = None
    patient_column: str | None = None
    fields: tuple[str, ...] = ()
    config: dict[str, Any] | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    corrupt_column: str | None = None

    def fingerprint(self, key: bytes | None) -> str:
        """A digest of what decides the pipeline; the key enters only through a hash of it."""
        return settings_fingerprint(
            {"language": self.language, "config": self.config, "overrides": self.overrides}, key
        )

    def build(self, key: bytes | None) -> MultilingualDeidentifier:
        from clinideid.config import parse_config

        cfg = parse_config(self.config, "pipeline config") if self.config is not None else None
        deid = MultilingualDeidentifier(self.language, key, cfg, self.overrides)
        deid.build_all()
        return deid


_PIPELINES: dict[str, MultilingualDeidentifier] = {}
#: pipelines this process has built, per fingerprint (a process that builds one twice has lost its cache)
BUILDS: Counter = Counter()


def cached_pipeline(settings: SparkDeidSettings, key: bytes | None) -> MultilingualDeidentifier:
    """The process's pipeline for these settings and key, built on first use."""
    fingerprint = settings.fingerprint(key)
    deid = _PIPELINES.get(fingerprint)
    if deid is None:
        started = time.perf_counter()
        deid = settings.build(key)
        if len(_PIPELINES) >= MAX_CACHED:
            _PIPELINES.pop(next(iter(_PIPELINES)))
        _PIPELINES[fingerprint] = deid
        BUILDS[fingerprint] += 1
        log.info("de-identification pipeline built in %.1f s", time.perf_counter() - started)
    return deid


@dataclass
class RowOutcome:
    """What one row becomes: its new text and field values (``None`` when it failed) and its report."""

    status: str
    text: str | None = None
    fields: dict[str, str | None] = field(default_factory=dict)
    error: str | None = None
    report: str | None = None
    spans_per_label: dict[str, int] = field(default_factory=dict)
    chars: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


def _failed(error: str, warnings: list[str] | None = None) -> RowOutcome:
    return RowOutcome("failed", error=error, warnings=warnings or [])


def _present(value: Any) -> bool:
    if value is None:
        return False
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):  # arrays, dicts: not a scalar missing value
        return True


def _as_text(value: Any) -> str | None:
    """An id as text; ``None`` when missing or empty."""
    if not _present(value):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # an integer column with nulls reaches pandas as floats
    return str(value) or None


def deidentify_row(
    row: dict[str, Any], settings: SparkDeidSettings, deid: MultilingualDeidentifier
) -> RowOutcome:
    """De-identify one row (column name → value) the way the folder runner handles one JSONL record."""
    if settings.corrupt_column and _present(row.get(settings.corrupt_column)):
        return _failed("the input line could not be parsed (malformed record); not processed")
    raw_id = _as_text(row.get(settings.id_column))
    if raw_id is None:
        return _failed(f"no id: the {settings.id_column!r} column is empty")
    doc_id = display_id(raw_id)
    text = row.get(settings.text_column)
    if not isinstance(text, str):
        return _failed(f"no text: the {settings.text_column!r} column is empty or not a string")
    try:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > settings.max_bytes:
            raise ClinideidError(
                f"text over the limit of {settings.max_bytes} bytes; raise --max-bytes to process it"
            )
        check_text(text, "text")
        language = settings.language if settings.language != "auto" else None
        if settings.language_column is not None:
            language = normalise_language(row.get(settings.language_column), "language") or language
    except ClinideidError as exc:
        return _failed(str(exc))
    patient_id = _as_text(row.get(settings.patient_column)) if settings.patient_column else None
    metadata = {"patient_id": patient_id} if patient_id is not None else {}
    doc = Document(doc_id, text, language, metadata)
    warnings = [] if text.strip() else ["empty document: written unchanged"]
    record = {name: row.get(name) for name in settings.fields}
    record = {k: v for k, v in record.items() if isinstance(v, str)}
    fields = fields_to_deidentify(record, settings.text_column, FieldPolicy())
    limit = default_time_limit(len(text)) if settings.time_limit is None else settings.time_limit
    task = Task(doc, [(field_label(path), value) for path, value in fields], patient_id, limit)
    outcome = compute(task, deid)  # config and model errors propagate: a problem of the whole job
    if outcome.error is not None:
        log.warning("a document failed: %s", outcome.error)  # executor logs travel far: no id
        return _failed(outcome.error, warnings)
    if outcome.internal is not None:
        log.error("a document failed with an internal error (%s)", outcome.internal)
        return _failed(f"internal error ({outcome.internal})", warnings)
    result, field_results, seconds = outcome.result, outcome.field_results, outcome.seconds
    report = {**result.report(), "id": doc_id, "audit": outcome.audit}
    report["fields"] = [
        {"field": dotted(path), "replacements": [r.to_dict() for r in reps]}
        for (path, _), (_, reps) in zip(fields, field_results, strict=True)
        if reps
    ]
    labels: Counter = Counter(r.label for r in result.replacements)
    labels.update(r.label for _, reps in field_results for r in reps)
    new_fields = {str(path[0]): new for (path, _), (new, _) in zip(fields, field_results, strict=True)}
    return RowOutcome(
        "done",
        text=result.text,
        fields=new_fields,
        report=json.dumps(report, ensure_ascii=False),
        spans_per_label=dict(sorted(labels.items())),
        chars=len(text),
        seconds=round(seconds, 4),
        warnings=[*warnings, *result.warnings],
    )


def _guarded(row: dict[str, Any], settings: SparkDeidSettings, deid: MultilingualDeidentifier) -> RowOutcome:
    """``deidentify_row``, with any error outside the pipeline call (a row's values, its report) turned
    into that row's failure too: only a problem of the whole job (config, model) stops the job."""
    try:
        return deidentify_row(row, settings, deid)
    except (ConfigError, ModelError):
        raise
    except ClinideidError as exc:
        return _failed(str(exc))
    except Exception as exc:
        log.error("a row failed with an internal error (%s)", type(exc).__name__)
        return _failed(f"internal error ({type(exc).__name__})")


def deidentify_frame(batch: pd.DataFrame, settings: SparkDeidSettings, key: bytes | None) -> pd.DataFrame:
    """A batch of rows with text and string fields de-identified and the bookkeeping columns appended.

    A failed row keeps only its id, language and the columns copied verbatim: its text and fields become
    null, so no original text goes on.
    """
    deid = cached_pipeline(settings, key)
    out = batch.copy()
    outcomes = [_guarded(row, settings, deid) for row in batch.to_dict("records")]
    out[settings.text_column] = [o.text for o in outcomes]
    if settings.corrupt_column and settings.corrupt_column in out.columns:
        out[settings.corrupt_column] = None  # a malformed line's raw text goes no further
    for name in settings.fields:
        if name in out.columns:
            old = batch[name].tolist()
            out[name] = [
                (o.fields.get(name, old[i]) if o.status == "done" else None) for i, o in enumerate(outcomes)
            ]
    out[STATUS] = [o.status for o in outcomes]
    out[ERROR] = [o.error for o in outcomes]
    out[REPORT] = [o.report for o in outcomes]
    out[SPANS_PER_LABEL] = [o.spans_per_label for o in outcomes]
    out[CHARS] = [o.chars for o in outcomes]
    out[SECONDS] = [o.seconds for o in outcomes]
    out[WARNINGS] = [o.warnings for o in outcomes]
    return out


def batch_function(settings: SparkDeidSettings, key_broadcast: Any):
    """The function ``mapInPandas`` runs: the key is read from its broadcast on the executor."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        key = key_broadcast.value if key_broadcast is not None else None
        for batch in batches:
            yield deidentify_frame(batch, settings, key)

    return run
