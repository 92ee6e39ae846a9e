"""The computing half of one document's work, every stage under one time limit, writing nothing.

The batch runner splits each input into what only the parent may do (name the output, skip what is done,
write the outputs, commit the journal line, in input order) and this step, which runs in a worker process
(``batch.workers``, under its memory limit) or, for tables and Spark, in the caller's process: read a
document file to text (DOCX, PDF, image...), de-identify it, audit the output, and render the document in
its own format, all within ``Task.limit``. ``Task`` and ``Outcome`` therefore pickle, and an ``Outcome``
carries a document's error as a message, never as an exception object.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clinideid.audit.residual import audit_document
from clinideid.batch.limits import DocumentTimeout, memory_message, time_limit
from clinideid.document import Document
from clinideid.errors import ClinideidError, ConfigError, ModelError
from clinideid.mentions import Mention
from clinideid.pipeline import DeidResult, MultilingualDeidentifier
from clinideid.transform.apply import Replacement

if TYPE_CHECKING:
    from clinideid.batch.inputs import DocumentSource

EMPTY_WARNING = "empty document: written unchanged"


@dataclass
class Task:
    """One document to de-identify: the note (or ``source``, a document file read as part of the task),
    the record's other text fields as ``(label, value)``. ``known``: names and places found in the
    patient's other documents, marked in this one too. ``collect``: only find the document's names and
    places (``Outcome.mentions``; the first pass of a run with patient ids), de-identify nothing."""

    doc: Document | None
    fields: Sequence[tuple[str, str]] = ()
    patient_id: str | None = None
    limit: float | None = None  # seconds for every stage together; None or 0: no limit
    source: DocumentSource | None = None
    known: tuple[Mention, ...] = ()
    collect: bool = False


@dataclass
class Outcome:
    """A result, or the reason there is none: ``error`` (the document's own problem, already phrased for
    the report) or ``internal`` (an unexpected exception's type name: a bug, reported without its text).
    ``warnings``, ``chars`` and, for a document file, ``extraction`` and ``format_output`` (the rendered
    document's suffix and bytes) come with it."""

    result: DeidResult | None = None
    field_results: list[tuple[str, list[Replacement]]] = field(default_factory=list)
    seconds: float = 0.0  # de-identifying only (reading and rendering not counted)
    audit: dict | None = None  # the residual-risk audit of the output text (offsets and kinds, no text)
    error: str | None = None
    internal: str | None = None
    warnings: list[str] = field(default_factory=list)
    chars: int = 0
    extraction: dict[str, Any] | None = None
    format_output: tuple[str, bytes] | None = None
    mentions: list[Mention] | None = None  # a ``collect`` task's names and places


def compute(task: Task, deid: MultilingualDeidentifier) -> Outcome:
    """Read, de-identify, audit and render ``task`` under its time limit; ``ConfigError``/``ModelError``
    (problems of the whole run) propagate. The audit runs here, so that every front end (folders, tables,
    Spark) reports it."""
    out = Outcome()
    try:
        with time_limit(task.limit):
            _compute(task, deid, out)
    except (ConfigError, ModelError):
        raise
    except (ClinideidError, DocumentTimeout) as exc:
        out.result, out.error = None, str(exc)
    except MemoryError:
        out.result, out.error = None, memory_message()
    except Exception as exc:  # a bug must not lose the rest of the batch; the type is enough to report
        out.result, out.internal = None, type(exc).__name__
    if out.result is None:
        out.format_output = None
    return out


def _compute(task: Task, deid: MultilingualDeidentifier, out: Outcome) -> None:
    """The stages, filling ``out``; ``out.result`` is set last, once every stage has succeeded."""
    doc, extracted = task.doc, None
    if task.source is not None:
        doc, extracted = task.source.read()
        out.warnings.extend(extracted.warnings)
    assert doc is not None
    out.chars = len(doc.text)
    if task.collect:
        out.mentions = deid.mentions(doc, list(task.fields))
        return
    if not doc.text.strip():
        out.warnings.append(EMPTY_WARNING)
    started = time.perf_counter()
    result, field_results = deid.deidentify_with_fields(doc, list(task.fields), task.patient_id, task.known)
    seconds = time.perf_counter() - started
    try:
        audit = audit_document(result.text, result.language, result.replacements)
    except (MemoryError, DocumentTimeout):
        raise
    except Exception as exc:  # an audit bug fails this document's report, never the batch
        out.internal = f"audit: {type(exc).__name__}"
        return
    if extracted is not None:
        from clinideid.ingest.outputs import output_suffix, render_output

        out.format_output = (output_suffix(extracted), render_output(extracted, result))
        out.extraction = extracted.summary()
    out.result, out.field_results, out.seconds, out.audit = result, field_results, seconds, audit
