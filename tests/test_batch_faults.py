"""Fault injection: kill -9 at random points of a batch, SIGINT, two runs into one folder.

The check is strong: after any number of kills and ``--resume``, the outputs, ``report.jsonl`` and the
JSONL output are byte for byte those of one uninterrupted run with the same key, and the summary counts
every document once.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from batch_fixtures import (
    journal_lines,
    key_file,
    output_files,
    run_to_end,
    start,
    wait_for_journal,
    write_brat_notes,
    write_jsonl_notes,
    write_text_notes,
)

pytestmark = pytest.mark.slow

N_DOCS = 30
#: the runs here test the batch machinery (journal, resume, signals), not detection: they use the
#: rules-only pipeline, several times faster than the default on these long notes
NOTE_SIZE = 12_000


def _kill_and_resume(src: Path, out: Path, args: list[str], seed: int, kills: int = 3) -> int:
    """Start the run, kill -9 it after a random number of finished documents, resume; repeat."""
    rng = random.Random(seed)
    runs = 0
    for attempt in range(kills + 1):
        extra = ["--resume"] if attempt else []
        proc = start(str(src), "-o", str(out), *args, *extra)
        runs += 1
        target = journal_lines(out) + rng.randint(1, 8)
        if attempt < kills and wait_for_journal(out, target, proc):
            # land the kill at a random instant inside the next document, not only between two
            time.sleep(rng.uniform(0, 0.06))
            proc.kill()
            proc.wait()
            continue
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        return runs
    raise AssertionError("the run never finished")


@pytest.mark.parametrize("kind", ["text", "jsonl", "brat"])
def test_kill_9_then_resume_is_exactly_once(tmp_path: Path, kind: str):
    key = key_file(tmp_path, b"fault-injection tests")
    if kind == "text":
        src = tmp_path / "notes"
        planted = write_text_notes(src, N_DOCS, NOTE_SIZE)
        fmt: list[str] = []
    elif kind == "jsonl":
        src = tmp_path / "notes.jsonl"
        planted = write_jsonl_notes(src, N_DOCS, NOTE_SIZE)
        fmt = []
    else:
        src = tmp_path / "corpus"
        planted = write_brat_notes(src, N_DOCS, NOTE_SIZE)
        fmt = ["--format", "brat"]
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress", *fmt]

    clean = tmp_path / "clean"
    res = run_to_end(str(src), "-o", str(clean), *args)
    assert res.returncode == 0, res.stderr

    out = tmp_path / "out"
    runs = _kill_and_resume(src, out, args, seed={"text": 1, "jsonl": 2, "brat": 3}[kind])

    assert output_files(out) == output_files(clean)  # same bytes: nothing lost, doubled or half-written
    report_ids = [json.loads(x)["id"] for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert len(report_ids) == N_DOCS == len(set(report_ids))
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["documents"] == summary["succeeded"] == N_DOCS and summary["failed"] == 0
    assert summary["complete"] is True
    assert len(summary["runs"]) == runs
    assert [r["ended"] for r in summary["runs"]] == ["killed"] * (runs - 1) + ["finished"]
    assert sum(r["done"] for r in summary["runs"]) == N_DOCS  # each document done once, in some run
    if kind == "jsonl":
        records = (out / "notes.jsonl").read_text("utf-8").splitlines()
        assert len(records) == N_DOCS
    everything = b"".join(output_files(out).values()).decode("utf-8")
    assert not any(phi in everything for phi in planted)


def test_kill_inside_a_long_document_leaves_no_partial_output(tmp_path: Path):
    key = key_file(tmp_path, b"fault-injection tests")
    src = tmp_path / "notes"
    write_text_notes(src, 2, 2000)
    big = src / "note999.txt"  # sorted last: processed after the two short notes
    big.write_text((src / "note000.txt").read_text("utf-8") * 800, encoding="utf-8")  # ~1.6 MB
    out = tmp_path / "out"
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress"]
    proc = start(str(src), "-o", str(out), *args)
    assert wait_for_journal(out, 3, proc)  # run marker + the two short notes: now inside the long one
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "note999.txt").exists()
    leftovers = [p for p in out.rglob("*") if p.is_file() and ".clinideid" not in p.parts]
    assert sorted(p.name for p in leftovers) == ["note000.txt", "note001.txt"]
    res = run_to_end(str(src), "-o", str(out), *args, "--resume")
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 3 and summary["skipped"] == 2
    assert (out / "note999.txt").stat().st_size > 1_000_000


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["in-process", "two-workers"])
def test_sigint_finishes_the_current_document_and_writes_the_summary(tmp_path: Path, workers: list[str]):
    """In-process: the current document is finished; with workers: the chunks out are finished and
    committed in order, no new ones are sent."""
    key = key_file(tmp_path, b"fault-injection tests")
    src = tmp_path / "notes"
    write_text_notes(src, N_DOCS * 2 if workers else N_DOCS, NOTE_SIZE)
    n = N_DOCS * 2 if workers else N_DOCS
    out = tmp_path / "out"
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress", *workers]
    proc = start(str(src), "-o", str(out), *args)
    assert wait_for_journal(out, 4, proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "--resume" in stderr and "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert 0 < summary["succeeded"] < n and summary["complete"] is False
    assert summary["runs"][-1]["ended"] == "stopped by SIGINT"
    done = summary["succeeded"]
    assert len((out / "report.jsonl").read_text("utf-8").splitlines()) == done
    assert sorted(p.name for p in out.glob("note*.txt")) == [f"note{i:03d}.txt" for i in range(done)]

    res = run_to_end(str(src), "-o", str(out), *args, "--resume")
    assert res.returncode == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == n and summary["skipped"] == done and summary["complete"] is True


def test_a_second_run_into_the_same_folder_is_refused(tmp_path: Path):
    key = key_file(tmp_path, b"fault-injection tests")
    src = tmp_path / "notes"
    write_text_notes(src, 400, NOTE_SIZE)  # long enough to still run when the second starts
    out = tmp_path / "out"
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress"]
    first = start(str(src), "-o", str(out), *args)
    assert wait_for_journal(out, 2, first)
    second = run_to_end(str(src), "-o", str(out), *args, "--resume")
    assert second.returncode == 2
    assert "another clinideid run" in second.stderr
    _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    lines = (out / "report.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 400 and all(json.loads(x)["id"] for x in lines)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 400 and len(summary["runs"]) == 1
