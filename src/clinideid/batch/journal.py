"""The run journal: what makes a batch exactly-once, resumable and safe against a second run.

``<output>/.clinideid/journal.jsonl`` gets one line per finished input, appended (and flushed) only after
that input's output is in place: a document is *done* exactly when its journal line is complete. A kill at
any instant therefore leaves each document done (output + journal line) or not done (at most a stray
output that the resumed run rewrites); a torn last line is cut off when the journal is opened again.
``report.jsonl`` and ``summary.json`` are rebuilt from the journal at the end of every run (atomically),
so they cover every run that wrote to the folder. A lock on ``.clinideid/lock`` keeps a second run out.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinideid.audit.summary import AuditCollector
from clinideid.batch.paths import REPORT_NAME, STATE_DIR, SUMMARY_NAME
from clinideid.errors import ConfigError

JOURNAL_NAME = "journal.jsonl"
LOCK_NAME = "lock"
FORMAT_VERSION = 1


def write_atomic(path: Path, data: bytes, tmp_dir: Path, durable: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in ``tmp_dir`` and a rename: readers see the old
    file or the new one, never a part."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    tmp = tmp_dir / f"{os.getpid()}-{time.monotonic_ns()}.part"
    with tmp.open("wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


class RunLock:
    """An exclusive lock on an output folder, released by the kernel if the process dies."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fh = None

    def acquire(self) -> None:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ConfigError(
                "another clinideid run is writing to this output folder; wait for it to finish or choose "
                "another -o"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing drops the flock
            self._fh = None


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
        self._fh = None

    # -- opening -------------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> None:
        """Read the journal, cutting off a last line torn by a kill."""
        if not self.path.exists():
            return
        good_end = 0
        with self.path.open("rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                try:
                    entry = json.loads(raw)
                except ValueError:
                    break
                good_end += len(raw)
                self._note(entry)
        if good_end != self.path.stat().st_size:
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)

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
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("ab")
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
        assert self._fh is not None
        self._fh.write((json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii"))
        self._fh.flush()
        if self.durable:
            os.fsync(self._fh.fileno())

    def end_run(self, **info: Any) -> None:
        """Mark how this run ended (``finished``, ``interrupted``…) with its own counts."""
        self._append({"run_end": self.runs, **info})

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    # -- reading back --------------------------------------------------------------------------------------
    def final_entries(self) -> Iterator[dict[str, Any]]:
        """The last entry of every input, in the order they were last finished."""
        last_line: dict[str, int] = {}
        with self.path.open("rb") as fh:
            for i, raw in enumerate(fh):
                entry = json.loads(raw)
                if "id" in entry:
                    last_line[entry["id"]] = i
        with self.path.open("rb") as fh:
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
    tmp_dir.mkdir(parents=True, exist_ok=True)
    per_label: Counter = Counter()
    per_source: Counter = Counter()
    per_operator: Counter = Counter()
    fallbacks: Counter = Counter()
    counts: Counter = Counter()
    characters = 0
    seconds = 0.0
    errors: list[dict[str, str]] = []
    warnings: list[dict[str, str]] = []
    ignored: list[dict[str, str]] = []
    audit = AuditCollector()
    languages = LanguageCounts()
    report_tmp = tmp_dir / f"{os.getpid()}-report.part"
    with report_tmp.open("w", encoding="utf-8") as report:
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
                report.write(json.dumps(rep, ensure_ascii=False) + "\n")
                audit.add(rep)
                languages.add(rep)
                for r in _all_replacements(rep):
                    per_label[r["label"]] += 1
                    per_source[r["source"]] += 1
                    per_operator[r["operator"]] += 1
                    if r.get("note"):
                        fallbacks[r["note"]] += 1
        if durable:
            report.flush()
            os.fsync(report.fileno())
    os.replace(report_tmp, journal.out_dir / REPORT_NAME)
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
    with journal.path.open("rb") as fh:
        for raw in fh:
            entry = json.loads(raw)
            if "run" in entry:
                runs.append({"run": entry["run"], "done": 0, "failed": 0, "ended": "killed"})
            elif "run_end" in entry and runs:
                runs[-1].update({k: v for k, v in entry.items() if k != "run_end"})
            elif runs and entry.get("status") in ("done", "failed"):
                runs[-1][entry["status"]] += 1
    return runs
