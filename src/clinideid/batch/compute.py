"""The computing half of one document's work: de-identify it under the time limit, write nothing.

The batch runner splits each input into what only the parent may do (name the output, skip what is done,
write the output, commit the journal line, in input order) and this pure step, which runs in the same
process (``--workers 1``) or in a worker process. ``Task`` and ``Outcome`` therefore pickle, and an
``Outcome`` carries a document's error as a message, never as an exception object.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from clinideid.audit.residual import audit_document
from clinideid.batch.limits import DocumentTimeout, time_limit
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.pipeline import DeidResult, MultilingualDeidentifier
from clinideid.transform.apply import Replacement


@dataclass
class Task:
    """One document to de-identify: the note, the record's other text fields as ``(label, value)``."""

    doc: Document
    fields: Sequence[tuple[str, str]] = ()
    patient_id: str | None = None
    limit: float | None = None  # seconds; None or 0: no limit


@dataclass
class Outcome:
    """A result, or the reason there is none: ``error`` (the document's own problem, already phrased for
    the report) or ``internal`` (an unexpected exception's type name: a bug, reported without its text)."""

    result: DeidResult | None = None
    field_results: list[tuple[str, list[Replacement]]] = field(default_factory=list)
    seconds: float = 0.0
    audit: dict | None = None  # the residual-risk audit of the output text (offsets and kinds, no text)
    error: str | None = None
    internal: str | None = None


def compute(task: Task, deid: MultilingualDeidentifier) -> Outcome:
    """De-identify ``task.doc`` and audit its output; ``ConfigError``/``ModelError`` (problems of the whole run)
    propagate. The audit runs here, in the worker, so that every front end (folders, tables, Spark) reports it."""
    started = time.perf_counter()
    try:
        with time_limit(task.limit):
            result, field_results = deid.deidentify_with_fields(task.doc, list(task.fields), task.patient_id)
    except (ConfigError, ModelError):
        raise
    except (ClinideidError, DocumentTimeout) as exc:
        return Outcome(error=str(exc))
    except Exception as exc:  # a bug must not lose the rest of the batch; the type is enough to report
        return Outcome(internal=type(exc).__name__)
    seconds = time.perf_counter() - started
    try:
        audit = audit_document(result.text, result.language, result.replacements)
    except Exception as exc:  # an audit bug fails this document's report, never the batch
        return Outcome(internal=f"audit: {type(exc).__name__}")
    return Outcome(result, field_results, seconds, audit)
