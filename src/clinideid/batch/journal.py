"""The run journal: what makes a batch exactly-once, resumable and safe against a second run.

``<output>/.clinideid/journal.jsonl`` gets one line per finished input, appended (and flushed) only after
that input's output is in place: a document is *done* exactly when its journal line is complete. A kill at
any instant therefore leaves each document done (output + journal line) or not done (at most a stray
output that the resumed run rewrites); a torn last line is cut off when the journal is opened again.
``report.jsonl`` and ``summary.json`` are rebuilt from the journal at the end of every run (atomically),
so they cover every run that wrote to the folder. A lock on ``.clinideid/lock`` keeps a second run out.
Lines are appended whole or not at all (``files.AppendFile``): a line that a full disk cuts short is cut
off at once, and the failed write stops the run (``writing`` makes it an ``OutputWriteError``, exit 4).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from clinideid.audit.summary import AuditCollector
from clinideid.batch.paths import JOURNAL_NAME, LOCK_NAME, REPORT_NAME, STATE_DIR, SUMMARY_NAME
from clinideid.errors import ConfigError, OutputWriteError
from clinideid.files import AppendFile, atomic_file, open_read, real_dir, write_atomic

FORMAT_VERSION = 1
#: how a run stopped by an unwritable output goes on, once the cause is fixed
RESUME_HINT = ", then run the same command with --resume to finish (what is done so far is kept)"

__all__ = [
    "RunJournal",
    "RunLock",
    "build_reports",
    "every_step",
    "settings_fingerprint",
    "write_atomic",
    "writing",
]


def every_step(*steps: Callable[[], Any]) -> list[Any]:
    """Each step's result, every step run even when one before it could not write (an ``OutputWriteError``:
    closing a run writes several files, and each that can be written should be); then the first such
    error is raised."""
    results: list[Any] = []
    first: OutputWriteError | None = None
    for step in steps:
        try:
            results.append(step())
        except OutputWriteError as exc:
            results.append(None)
            first = first or exc
    if first is not None:
        raise first
    return results


@contextlib.contextmanager
def writing(what: str) -> Iterator[None]:
    """Turn an ``OSError`` of the block (disk full, read-only, permission...) into ``OutputWriteError``."""
    try:
        yield
    except OSError as exc:
        raise OutputWriteError(what, exc, RESUME_HINT) from None


class RunLock:
    """An exclusive lock on an output folder, released by the kernel if the process dies."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        with writing("the run's lock file"):
            real_dir(self.path.parent, self.path.parent.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ConfigError(
                "another clinideid run is writing to this output folder; wait for it to finish or choose "
                "another -o"
            ) from None
        with contextlib.suppress(OSError):  # the pid is for people; a full disk must not stop the run here
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


class RunJournal:
    """Append-only record of finished inputs of every run into one output folder."""

    def __init__(self, out_dir: Path, durable: bool = False) -> None:
        self.out_dir = out_dir
        self.state_dir = out_dir / STATE_DIR
        self.path = self.state_dir / JOURNAL_NAME
        self.durable = durable
        self.last_status: dict[str, str] = {}
        self.outputs: dict[str, str] = {}  # id -> output path (relative) of its last done entry
        self.format_outputs: dict[str, str] = {}  # id -> its DOCX/PDF/image output, for document inputs
        self.jsonl_end = 0
        self.settings: str | None = None
        self.runs = 0
        self._fh: AppendFile | None = None

    # -- opening -------------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.path.exists()

    @writing("the run's journal")
    def load(self) -> None:
        """Read the journal, cutting off a last line torn by a kill."""
        if not self.path.exists():
            return
        good_end = 0
        with open_read(self.path) as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                try:
                    entry = json.loads(raw)
                except ValueError:
                    break
                good_end += len(raw)
                self._note(entry)
        if good_end != os.lstat(self.path).st_size:
            torn = AppendFile(self.path)
            try:
                torn.truncate(good_end)
            finally:
                torn.close()

    def _note(self, entry: dict[str, Any]) -> None:
        if "run" in entry:
            self.runs = max(self.runs, entry["run"])
            self.settings = entry.get("settings", self.settings)
            return
        if "id" not in entry:  # the end-of-run marker
            return
        doc_id = entry["id"]
        self.last_status[doc_id] = entry["status"]
        if entry["status"] == "done":
            if entry.get("output"):
                self.outputs[doc_id] = entry["output"]
                if entry.get("format_output"):
                    self.format_outputs[doc_id] = entry["format_output"]
            if entry.get("jsonl_end") is not None:
                self.jsonl_end = entry["jsonl_end"]

    def check_settings(self, settings: str) -> None:
        """``ConfigError`` when a resumed run's settings (key, language, operators, naming…) differ."""
        if self.settings is not None and self.settings != settings:
            raise ConfigError(
                "--resume with other settings than the run being resumed (key, language, config, operators, "
                "models, field options or output naming differ): its outputs would be inconsistent; resume "
                "with the same options, or start a new output folder"
            )

    def start(self, settings: str) -> None:
        with writing("the run's journal"):
            real_dir(self.state_dir, self.out_dir)
            self._fh = AppendFile(self.path, self.durable)
        self.runs += 1
        self.settings = settings
        self._append({"run": self.runs, "settings": settings, "version": FORMAT_VERSION})

    # -- writing -------------------------------------------------------------------------------------------
    def is_done(self, doc_id: str) -> bool:
        return self.last_status.get(doc_id) == "done"

    def commit(self, entry: dict[str, Any]) -> None:
        """Record one finished input: once this returns, the input counts as done (or failed)."""
        self._append(entry)
        self._note(entry)

    def _append(self, entry: dict[str, Any]) -> None:
        """Append one whole line, or nothing (a line that cannot be written completely is cut off)."""
        assert self._fh is not None
        with writing("the run's journal"):
            self._fh.append((json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii"))

    def end_run(self, **info: Any) -> None:
        """Mark how this run ended (``finished``, ``interrupted``…) with its own counts."""
        self._append({"run_end": self.runs, **info})

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                with writing("the run's journal"):
                    fh.sync()
            finally:
                fh.close()

    # -- reading back --------------------------------------------------------------------------------------
    def final_entries(self) -> Iterator[dict[str, Any]]:
        """The last entry of every input, in the order they were last finished."""
        last_line: dict[str, int] = {}
        with open_read(self.path) as fh:
            for i, raw in enumerate(fh):
                entry = json.loads(raw)
                if "id" in entry:
                    last_line[entry["id"]] = i
        with open_read(self.path) as fh:
            for i, raw in enumerate(fh):
                entry = json.loads(raw)
                if "id" in entry and last_line[entry["id"]] == i:
                    yield entry


def settings_fingerprint(settings: dict[str, Any], key: bytes | None) -> str:
    """A digest of the settings that decide a run's outputs; the key enters only through a hash of it."""
    data = dict(settings)
    data["key"] = hashlib.sha256(b"clinideid-key-fingerprint\x00" + key).hexdigest() if key else None
    blob = json.dumps(data, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:32]


def build_reports(journal: RunJournal, skipped: int, finished: bool, durable: bool = False) -> dict[str, Any]:
    """Rewrite ``report.jsonl`` and ``summary.json`` from the journal; return the summary.

    ``skipped``: inputs this run found done already; ``finished``: whether this run read all its input.
    """
    tmp_dir = journal.state_dir / "tmp"
    per_label: Counter = Counter()
    per_source: Counter = Counter()
    per_operator: Counter = Counter()
    fallbacks: Counter = Counter()
    encodings: Counter = Counter()
    counts: Counter = Counter()
    characters = 0
    seconds = 0.0
    errors: list[dict[str, str]] = []
    warnings: list[dict[str, str]] = []
    ignored: list[dict[str, str]] = []
    audit = AuditCollector()
    languages = LanguageCounts()
    with writing(REPORT_NAME), atomic_file(journal.out_dir / REPORT_NAME, tmp_dir, durable) as report:
        for entry in journal.final_entries():
            status = entry["status"]
            counts[status] += 1
            for warning in entry.get("warnings", ()):
                warnings.append({"id": entry["id"], "warning": warning})
            if status == "failed":
                errors.append({"id": entry["id"], "error": entry["error"]})
            elif status == "ignored":
                ignored.append({"id": entry["id"], "reason": entry["reason"]})
            elif status == "done":
                characters += entry.get("chars", 0)
                seconds += entry.get("seconds", 0.0)
                rep = entry["report"]
                report.write((json.dumps(rep, ensure_ascii=False) + "\n").encode("utf-8"))
                audit.add(rep)
                languages.add(rep)
                if rep.get("encoding"):
                    encodings[rep["encoding"]] += 1
                for r in _all_replacements(rep):
                    per_label[r["label"]] += 1
                    per_source[r["source"]] += 1
                    per_operator[r["operator"]] += 1
                    if r.get("note"):
                        fallbacks[r["note"]] += 1
    summary = {
        "documents": counts["done"] + counts["failed"],
        "succeeded": counts["done"],
        "failed": counts["failed"],
        "ignored": counts["ignored"],
        "skipped": skipped,
        "complete": finished and counts["failed"] == 0,
        "spans_per_label": dict(sorted(per_label.items())),
        "spans_per_detector": dict(sorted(per_source.items())),
        "spans_per_operator": dict(sorted(per_operator.items())),
        "operator_fallbacks": dict(sorted(fallbacks.items())),
        "encodings": dict(sorted(encodings.items())),
        "characters": characters,
        "seconds": round(seconds, 3),
        "characters_per_second": round(characters / seconds) if seconds else None,
        "languages": languages.summary(),
        "runs": _runs(journal),
        "errors": errors,
        "warnings": warnings,
        "ignored_inputs": ignored,
        "audit": audit.summary(),
    }
    data = (json.dumps(summary, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    with writing(SUMMARY_NAME):
        write_atomic(journal.out_dir / SUMMARY_NAME, data, tmp_dir, durable)
    return summary


class LanguageCounts:
    """Documents per language they were processed in, and how their language was identified.

    ``detected``: per language, the documents whose language was identified rather than given;
    ``low_confidence``: identified below ``text.language.MIN_CONFIDENCE``; ``undetermined``: nothing in the
    text to judge by, processed in the run's default language. Each of the last two also has a warning in
    the document's journal entry.
    """

    def __init__(self) -> None:
        self.documents: Counter = Counter()
        self.detected: Counter = Counter()
        self.low_confidence = 0
        self.undetermined = 0

    def add(self, report: dict[str, Any]) -> None:
        self.documents[report.get("language")] += 1
        detection = report.get("language_detection")
        if detection is None:
            return
        if detection.get("confidence") is None:
            self.undetermined += 1
            return
        self.detected[report.get("language")] += 1
        if not detection.get("reliable"):
            self.low_confidence += 1

    def summary(self) -> dict[str, Any]:
        return {
            "documents": dict(sorted(self.documents.items())),
            "detected": dict(sorted(self.detected.items())),
            "low_confidence": self.low_confidence,
            "undetermined": self.undetermined,
        }


def _all_replacements(report: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from report.get("replacements", ())
    for f in report.get("fields", ()):
        yield from f.get("replacements", ())


def _runs(journal: RunJournal) -> list[dict[str, Any]]:
    """One line per run that wrote to the folder: what it did and how it ended (a killed run has no end)."""
    runs: list[dict[str, Any]] = []
    with open_read(journal.path) as fh:
        for raw in fh:
            entry = json.loads(raw)
            if "run" in entry:
                runs.append({"run": entry["run"], "done": 0, "failed": 0, "ended": "killed"})
            elif "run_end" in entry and runs:
                runs[-1].update({k: v for k, v in entry.items() if k != "run_end"})
            elif runs and entry.get("status") in ("done", "failed"):
                runs[-1][entry["status"]] += 1
    return runs
