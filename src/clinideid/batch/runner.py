"""Run a de-identification pipeline over many inputs: exactly once, resumable, never stopped by one input.

Order of work: the first input is read and the worker processes build the pipeline before the output
folder is touched (an unreadable input, a bad config or model is a run-wide error that leaves the folder as
it was); the folder is locked; the journal of earlier runs is loaded and checked against
``--resume``/``--overwrite``; then each input is read, de-identified and rendered in a worker process under
a time and a memory limit, its outputs written atomically, and its journal line committed. However the run
ends (normally, SIGINT/SIGTERM after the current document, a run-wide error), the JSONL output is moved
into place and ``report.jsonl`` and ``summary.json`` are rebuilt from the journal. An output that cannot be
written (disk full, read-only folder) stops the run rather than failing its document: ``--resume`` finishes
it later.

Each input goes through ``_prepare`` (name, skip or fail it without computing), ``compute`` (in a worker
process: ``batch.parallel``) and ``_finish`` (write, commit), the first and last here and in input order.
"""

from __future__ import annotations

import itertools
import logging
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinideid.batch.compute import Outcome, Task
from clinideid.batch.inputs import InputItem
from clinideid.batch.journal import RunJournal, RunLock, build_reports, every_step, writing
from clinideid.batch.limits import StopRequest, default_time_limit
from clinideid.batch.outputs import OutputWriter
from clinideid.batch.paths import (
    REPORT_NAME,
    STAGING_DIR,
    STATE_DIR,
    SUMMARY_NAME,
    TMP_DIR,
    OutputNamer,
    display_id,
    prepare_output_folder,
)
from clinideid.batch.patients import PatientMentions
from clinideid.batch.records import FieldPolicy, dotted, field_label, fields_to_deidentify, rebuild_record
from clinideid.batch.workers import WorkerPool
from clinideid.errors import ClinideidError, ConfigError, ModelError, OutputWriteError
from clinideid.pipeline import MultilingualDeidentifier

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_RUN_ERROR = 2  # a problem of the whole run, found before anything is written (``ClinideidError``)
EXIT_DOCUMENTS_FAILED = 3
EXIT_OUTPUT_UNWRITABLE = OutputWriteError.exit_code  # 4: disk full, read-only...: fix it, then --resume
EXIT_INTERRUPTED = 130


def patient_id_getter(spec: str | None) -> Callable[[InputItem], str | None]:
    """How to find a document's patient id: ``metadata:FIELD`` or ``filename:REGEX`` (first group)."""
    if not spec:
        return lambda item: None
    kind, _, arg = spec.partition(":")
    if kind == "metadata" and arg:
        return lambda item: (
            str(item.document.metadata.get(arg))
            if item.document and item.document.metadata.get(arg) is not None
            else None
        )
    if kind == "filename" and arg:
        try:
            pattern = re.compile(arg)
        except re.error as exc:
            raise ConfigError(
                f"--patient-id filename:REGEX is not a valid regular expression ({exc})"
            ) from None

        def from_name(item: InputItem) -> str | None:
            m = pattern.search(item.source_name)
            return (m.group(1) if m.groups() else m.group(0)) if m else None

        return from_name
    raise ConfigError(f"bad patient id source {spec!r}; use metadata:FIELD or filename:REGEX")


@dataclass
class BatchOptions:
    """How a batch reads, names and writes (the pipeline itself is configured elsewhere)."""

    annotations: str = "jsonl"
    jsonl_name: str | None = None  # the JSONL output's file name, for JSONL inputs
    resume: bool = False
    overwrite: bool = False
    naming: str = "id"
    fields: FieldPolicy = field(default_factory=FieldPolicy)
    time_limit: float | None = None  # seconds per document; None: the size-based default; 0: none
    durable: bool = False
    workers: int = 1  # worker processes (see batch/parallel.py); 0: from the cores and the input's size
    memory_limit: int | None = None  # bytes a worker may add for one document; None: the default; 0: none


@dataclass
class BatchOutcome:
    summary: dict[str, Any]
    interrupted_by: str | None = None

    @property
    def exit_code(self) -> int:
        if self.interrupted_by:
            return EXIT_INTERRUPTED
        return EXIT_DOCUMENTS_FAILED if self.summary["failed"] else EXIT_OK


def run_batch(
    items: Iterable[InputItem],
    deid: MultilingualDeidentifier,
    out_dir: Path,
    key: bytes | None,
    options: BatchOptions,
    settings: str,
    patient_id: Callable[[InputItem], str | None] = lambda item: None,
    progress: Callable[[], None] | None = None,
    reread: Callable[[], Iterable[InputItem]] | None = None,
) -> BatchOutcome:
    """De-identify ``items`` into ``out_dir``; ``settings`` is the fingerprint a resumed run must match.

    ``reread``, given with ``patient_id``: a fresh reading of the same inputs. A first pass over it then
    collects each patient's names and places, and every document of a patient marks them too
    (``batch.patients``)."""
    from clinideid.batch.parallel import plan_workers, start_workers

    iterator = iter(items)
    first = next(iterator, None)  # a run-wide input error surfaces here, before the output is touched
    namer = OutputNamer(options.naming, key)
    source, workers = plan_workers(
        itertools.chain([] if first is None else [first], iterator), options.workers
    )
    pool = start_workers(deid, workers, options.memory_limit)  # a bad config or model fails here
    finished = False
    try:
        writer = OutputWriter(out_dir, options.annotations, options.jsonl_name, options.durable)
        _check_output_folder(out_dir, options, writer)
        lock = RunLock(out_dir / STATE_DIR)
        lock.acquire()
    except BaseException:
        pool.close(kill=True)
        raise
    try:
        journal = RunJournal(out_dir, options.durable)
        journal.load()
        if journal.exists() and options.overwrite:
            _clear_previous_run(journal, writer)
            journal = RunJournal(out_dir, options.durable)
        elif journal.exists() and not options.resume:
            raise ConfigError(
                "the output folder holds an earlier run; pass --resume to finish it or --overwrite to "
                "replace it (or choose another -o)"
            )
        journal.check_settings(settings)
        shutil.rmtree(out_dir / STATE_DIR / TMP_DIR, ignore_errors=True)
        writer.open(journal.jsonl_end)
        journal.start(settings)
        run = _Run(deid, writer, journal, namer, options, patient_id, pool, reread=reread)
        outcome = _run(source, run, progress)
        finished = outcome.interrupted_by is None
        return outcome
    finally:
        pool.close(kill=not finished)
        lock.release()


@writing("the output folder")
def _check_output_folder(out_dir: Path, options: BatchOptions, writer: OutputWriter) -> None:
    prepare_output_folder(out_dir, options.overwrite, [writer.jsonl_name] if writer.jsonl_name else [])


@writing("the output folder")
def _clear_previous_run(journal: RunJournal, writer: OutputWriter) -> None:
    """Remove what an earlier run wrote (its outputs, reports and state), nothing else."""
    for rel in [*journal.outputs.values(), *journal.format_outputs.values()]:
        for path in (writer.out_dir / rel, (writer.out_dir / rel).with_suffix(".ann")):
            if path.is_file() and not path.is_symlink():
                writer.target(rel)  # refuses paths outside the folder
                path.unlink()
    for name in (REPORT_NAME, SUMMARY_NAME, writer.jsonl_name):
        if name and (writer.out_dir / name).is_file():
            (writer.out_dir / name).unlink()
    shutil.rmtree(journal.state_dir / STAGING_DIR, ignore_errors=True)
    journal.path.unlink()


@dataclass
class _Run:
    """Everything one run's documents are processed with."""

    deid: MultilingualDeidentifier
    writer: OutputWriter
    journal: RunJournal
    namer: OutputNamer
    options: BatchOptions
    patient_id: Callable[[InputItem], str | None]
    pool: WorkerPool
    skipped: int = 0  # inputs this run found done by an earlier run
    #: with patient ids: a fresh reading of the inputs, for the first pass (``batch.patients``)
    reread: Callable[[], Iterable[InputItem]] | None = None
    mentions: PatientMentions | None = None  # filled by the first pass


def _run(items: Iterable[InputItem], run: _Run, progress: Callable[[], None] | None) -> BatchOutcome:
    finished = False
    stop = StopRequest()
    ended = "error"
    failing = True  # until the loop ends normally: teardown errors must not hide the first one
    try:
        with stop:
            from clinideid.batch.parallel import run_parallel

            if run.reread is not None:  # a first pass: each patient's names and places
                from clinideid.batch.patients import collect_mentions

                run.mentions = PatientMentions()
                finished = collect_mentions(run.reread(), run, stop)
            if run.reread is None or finished:
                finished = run_parallel(items, run, stop, progress)
        ended = "finished" if finished else f"stopped by {stop.signal_name}"
        failing = False
    except KeyboardInterrupt:
        ended = "stopped by SIGINT"
        stop.signal_name = "SIGINT"
        raise
    except OutputWriteError:
        ended = "stopped: an output could not be written"
        raise
    finally:
        summary = _close(run, ended, finished, failing)
    return BatchOutcome(summary, None if finished else (stop.signal_name or "error"))


def _close(run: _Run, ended: str, finished: bool, failing: bool) -> dict[str, Any]:
    """Put the JSONL output in place, mark the run's end, rebuild the reports and close the journal. After a
    failed run (``failing``) an unwritable output here (the same full disk) must not hide the first error:
    the journal stays consistent and ``--resume`` rebuilds the reports."""
    try:
        _, _, summary, _ = every_step(
            run.writer.close,
            lambda: run.journal.end_run(ended=ended, skipped=run.skipped),
            lambda: build_reports(run.journal, run.skipped, finished, run.options.durable),
            run.journal.close,
        )
    except OutputWriteError:
        if not failing:
            raise
        return {}
    return summary


@dataclass
class _Pending:
    """One input between reading and committing: what the parent decided before any computing."""

    item: InputItem
    out_id: str
    relpath: str | None  # the output file; None for a JSONL record
    warnings: list[str]
    skip: bool = False  # done by an earlier run
    entry: dict[str, Any] | None = None  # a journal entry known without computing (ignored, unreadable)
    fields: list[tuple[Any, str]] = field(default_factory=list)  # a record's other fields: (path, value)
    task: Task | None = None


def _prepare(item: InputItem, run: _Run) -> _Pending:
    """Name the output (in input order: duplicate ids are numbered) and decide what the input needs."""
    options, journal, writer = run.options, run.journal, run.writer
    out_id, duplicate = run.namer.name(item.doc_id, item.suffix)
    relpath = None if item.record is not None else out_id + (item.suffix or ".txt")
    warnings = ["duplicate id: this document's output has a ~N suffix"] if duplicate else []
    pending = _Pending(item, out_id, relpath, warnings)
    if item.ignored is not None:
        pending.entry = {"id": out_id, "status": "ignored", "reason": _scrub(pending, options, item.ignored)}
        return pending
    if options.resume and journal.is_done(out_id) and (relpath is None or writer.exists(relpath)):
        pending.skip = True
        return pending
    if item.source is None and item.error is not None:
        pending.entry = _failed(pending, options, item.error)
        return pending
    try:
        pending.fields = record_fields(item, options)
    except ClinideidError as exc:
        pending.entry = _failed(pending, options, str(exc))
        return pending
    known = run.mentions.of(run.patient_id(item)) if run.mentions is not None else ()
    pending.task = new_task(item, run, pending.fields, known=known)
    return pending


def record_fields(item: InputItem, options: BatchOptions) -> list[tuple[Any, str]]:
    """A record's text fields to de-identify with its note, as ``(path, value)``; none for a document."""
    if item.record is None:
        return []
    return fields_to_deidentify(item.record, item.text_field or "text", options.fields)


def new_task(item: InputItem, run: _Run, fields: list[tuple[Any, str]], **extra: Any) -> Task:
    """The task of a readable input: a document file (read in the worker, so a resumed run skips it
    unread), or a document with its record's other ``fields``; ``extra``: more ``Task`` fields."""
    options = run.options
    if item.source is not None:
        size = item.source.size  # the default limit grows with the file (characters are not known yet)
        limit = default_time_limit(size) if options.time_limit is None else options.time_limit
        return Task(None, [], run.patient_id(item), limit, item.source, **extra)
    assert item.document is not None
    doc = item.document
    limit = default_time_limit(len(doc.text)) if options.time_limit is None else options.time_limit
    labelled = [(field_label(path), value) for path, value in fields]
    return Task(doc, labelled, run.patient_id(item), limit, **extra)


def _scrub(pending: _Pending, options: BatchOptions, message: str) -> str:
    """With outputs named by keyed hash, the input's names must not appear in messages either."""
    if options.naming != "hash":
        return message
    item = pending.item
    names = {item.doc_id + item.suffix, item.doc_id, item.source_name}
    names |= {display_id(n) for n in names}
    for token in sorted(names, key=len, reverse=True):
        if token:
            message = message.replace(token, pending.out_id)
    return message


def _failed(pending: _Pending, options: BatchOptions, error: str, internal: bool = False) -> dict[str, Any]:
    """The journal entry of a failed input (logged without PHI: an id and a message)."""
    if internal:
        log.error("document %s failed with an internal error (%s)", pending.out_id, error)
        message = f"internal error ({error})"
    else:
        message = _scrub(pending, options, error)
        log.warning("document %s failed: %s", pending.out_id, message)
    return {"id": pending.out_id, "status": "failed", "error": message, "warnings": pending.warnings}


def _finish(pending: _Pending, run: _Run, outcome: Outcome | None) -> None:
    """Write the output and commit the journal line (the parent alone does this, in input order)."""
    writer, journal, options = run.writer, run.journal, run.options
    out_id, relpath, item = pending.out_id, pending.relpath, pending.item
    if pending.skip:
        run.skipped += 1
        return
    if pending.entry is not None or outcome is None:
        assert pending.entry is not None
        journal.commit(pending.entry)
        return
    pending.warnings.extend(outcome.warnings)
    if outcome.result is None:
        internal = outcome.internal is not None
        journal.commit(_failed(pending, options, outcome.internal or outcome.error or "", internal))
        return
    try:
        result, field_results, fields = outcome.result, outcome.field_results, pending.fields
        report = {**result.report(), "id": out_id}
        report["audit"] = outcome.audit
        if item.encoding is not None:
            report["encoding"] = item.encoding  # chosen per document with --encoding auto
        entry: dict[str, Any] = {"id": out_id, "status": "done", "output": relpath}
        if item.record is not None:
            report["fields"] = [
                {"field": dotted(path), "replacements": [r.to_dict() for r in reps]}
                for (path, _), (_, reps) in zip(fields, field_results, strict=True)
                if reps
            ]
            new_values = [(p, v, new) for (p, v), (new, _) in zip(fields, field_results, strict=True)]
            output_id = out_id if options.naming == "hash" else None
            record = rebuild_record(
                item.record, item.text_field or "text", result.text, new_values, options.fields, output_id
            )
            entry["jsonl_end"] = writer.write_record(record)
        else:
            assert relpath is not None
            if (
                outcome.format_output is not None
            ):  # the document in its own format first: the text marks it done
                from clinideid.ingest.outputs import write_format_output

                entry["format_output"] = write_format_output(writer, out_id, *outcome.format_output)
                report["extraction"] = outcome.extraction
            writer.write_text(result, relpath)
        warnings = [*pending.warnings, *result.warnings]  # an unreliable language guess is one
        entry.update(report=report, chars=outcome.chars, seconds=round(outcome.seconds, 4), warnings=warnings)
        journal.commit(entry)
    except (ConfigError, ModelError, OutputWriteError):
        raise  # a problem of the whole run, not of this document
    except ClinideidError as exc:
        journal.commit(_failed(pending, options, str(exc)))
    except Exception as exc:  # a bug must not lose the rest of the batch; the type is enough to report
        journal.commit(_failed(pending, options, type(exc).__name__, internal=True))
