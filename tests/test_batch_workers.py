"""``clinideid deid --workers N``: the same bytes as one process, and the same guarantees under faults.

Every test runs the real command in a subprocess with real worker processes: outputs compared byte for
byte with ``--workers 1``, a kill -9 of the parent then ``--resume``, a document that kills its worker, a
time limit enforced inside a worker, SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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
    write_jsonl_notes,
    write_text_notes,
)
from clinideid.batch.inputs import InputItem
from clinideid.batch.parallel import AUTO_CHARS_PER_WORKER, _workers_for, default_workers
from clinideid.document import Document

pytestmark = pytest.mark.slow

N_DOCS = 40
NOTE_SIZE = 6_000
TIMING_KEYS = ("seconds", "characters_per_second")


def _summary(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    for name in TIMING_KEYS:
        summary.pop(name)
    return summary


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("kind", ["text", "jsonl"])
def test_two_workers_write_the_same_bytes_as_one(tmp_path: Path, kind: str):
    key = key_file(tmp_path, b"worker tests")
    if kind == "text":
        src = tmp_path / "notes"
        planted = write_text_notes(src, N_DOCS, NOTE_SIZE)
        (src / "empty.txt").write_text("", encoding="utf-8")  # a warning, in order
        (src / "Thumbs.db").write_bytes(b"\x00")  # ignored, in order
    else:
        src = tmp_path / "notes.jsonl"
        planted = write_jsonl_notes(src, N_DOCS, NOTE_SIZE)
        with src.open("a", encoding="utf-8") as fh:
            fh.write("{not json\n")  # a failed record, in order
            fh.write(json.dumps({"id": "x", "text": "Seen by Dr. Quxbrom.", "ward": "Quxbrom ward"}) + "\n")
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress"]
    outs = {}
    for workers in (1, 2):
        out = tmp_path / f"out{workers}"
        res = run_to_end(str(src), "-o", str(out), *args, "--workers", str(workers))
        assert res.returncode == (0 if kind == "text" else 3), res.stderr
        outs[workers] = out
    assert output_files(outs[2]) == output_files(outs[1])
    assert _summary(outs[2]) == _summary(outs[1])
    assert _summary(outs[1])["succeeded"] == N_DOCS + 1  # the empty note, or the record "x"
    everything = b"".join(output_files(outs[2]).values()).decode("utf-8")
    assert not any(phi in everything for phi in [*planted, "Quxbrom"])


def _workers(pid: int) -> list[int]:
    """The worker processes of the command ``pid`` (not its resource tracker)."""
    found = []
    for child in _children(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:  # exited meanwhile
            continue
    return found


def test_kill_9_of_the_parent_then_resume_with_workers(tmp_path: Path):
    key = key_file(tmp_path, b"worker tests")
    src = tmp_path / "notes"
    n = 80
    write_text_notes(src, n, 12_000)
    args = ["-l", "en", "--pipeline", "rules", "--key-file", str(key), "--no-progress"]
    clean = tmp_path / "clean"
    assert run_to_end(str(src), "-o", str(clean), *args, "--workers", "1").returncode == 0

    out = tmp_path / "out"
    args += ["--workers", "2"]
    proc = start(str(src), "-o", str(out), *args)
    assert wait_for_journal(out, 4, proc)
    os.kill(_workers(proc.pid)[0], signal.SIGKILL)  # a worker dies: the run goes on without losing its work
    assert wait_for_journal(out, 30, proc)
    children = _children(proc.pid)
    assert children  # the worker processes (and the resource tracker)
    time.sleep(0.03)  # land inside a document
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in children), "workers outlived their parent"
    done_before = journal_lines(out) - 1
    assert done_before < n

    res = run_to_end(str(src), "-o", str(out), *args, "--resume")
    assert res.returncode == 0, res.stderr
    assert output_files(out) == output_files(clean)
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == n and summary["skipped"] == done_before and summary["failed"] == 0
    assert [r["ended"] for r in summary["runs"]] == ["killed", "finished"]
    assert sum(r["done"] for r in summary["runs"]) == n


CRASHING_DETECTOR = '''
"""clinideid with one more detector that kills its own process on a marker (a native crash, an OOM kill)."""
import os
import signal

from clinideid.detect.base import Detector, register_detector


@register_detector("crash_on_marker")
class CrashOnMarker(Detector):
    def detect_one(self, doc):
        if "CRASH-ME" in doc.text:
            os.kill(os.getpid(), signal.SIGKILL)
        return []


if __name__ == "__main__":
    from clinideid.cli import main

    main()
'''


def test_a_document_that_kills_its_worker_fails_alone(tmp_path: Path):
    key = key_file(tmp_path, b"worker tests")
    src = tmp_path / "notes"
    planted = write_text_notes(src, 30, 3000)
    (src / "note013.txt").write_text("Patient: Zorvak Quimbel\nCRASH-ME\n", encoding="utf-8")
    # the worker processes import the main script (spawn), so they know the extra detector too
    script = tmp_path / "clinideid_crashing.py"
    script.write_text(CRASHING_DETECTOR, encoding="utf-8")
    config = tmp_path / "pipeline.yaml"
    config.write_text(
        "language: en\ndetectors:\n  - {type: rules, language: en}\n  - {type: crash_on_marker}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    cmd = [sys.executable, str(script), "deid", str(src), "-o", str(out), "--config", str(config)]
    cmd += ["--key-file", str(key), "--no-progress", "--workers", "2"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 3, res.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 29 and summary["failed"] == 1
    assert summary["errors"][0]["id"] == "note013"
    assert "worker process" in summary["errors"][0]["error"]
    assert "Zorvak" not in res.stderr + json.dumps(summary)
    assert not (out / "note013.txt").exists()
    written = sorted(p.name for p in out.glob("note*.txt"))
    assert len(written) == 29
    everything = b"".join(output_files(out).values()).decode("utf-8")
    assert not any(phi in everything for phi in planted)
    ids = [json.loads(x)["id"] for x in (out / "report.jsonl").read_text("utf-8").splitlines()]
    assert ids == [p.removesuffix(".txt") for p in written]  # still in input order


def test_the_time_limit_is_enforced_inside_a_worker(tmp_path: Path):
    key = key_file(tmp_path, b"worker tests")
    src = tmp_path / "notes"
    write_text_notes(src, 20, 2000)
    huge = (src / "note000.txt").read_text("utf-8") * 400  # ~800 kB: far over 1 s
    (src / "note010x.txt").write_text(huge, encoding="utf-8")
    out = tmp_path / "out"
    args = ["-l", "en", "--key-file", str(key), "--no-progress", "--workers", "2", "--time-limit", "1"]
    started = time.monotonic()
    res = run_to_end(str(src), "-o", str(out), *args)
    assert res.returncode == 3, res.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["succeeded"] == 20 and summary["failed"] == 1
    assert summary["errors"][0]["id"] == "note010x" and "time limit" in summary["errors"][0]["error"]
    assert not (out / "note010x.txt").exists()
    assert time.monotonic() - started < 120


def test_sigterm_with_workers_leaves_no_worker_behind(tmp_path: Path):
    key = key_file(tmp_path, b"worker tests")
    src = tmp_path / "notes"
    write_text_notes(src, 80, 12_000)
    out = tmp_path / "out"
    proc = start(
        str(src),
        "-o",
        str(out),
        "-l",
        "en",
        "--pipeline",
        "rules",
        "--key-file",
        str(key),
        "--no-progress",
        "-j",
        "2",
    )
    assert wait_for_journal(out, 3, proc)
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    deadline = time.monotonic() + 10  # the resource tracker exits once the last worker has
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
    assert json.loads((out / "summary.json").read_text("utf-8"))["runs"][-1]["ended"] == "stopped by SIGTERM"


# -- how many workers by default ------------------------------------------------------------------------------
def _items(n: int, size: int) -> list[InputItem]:
    return [InputItem(f"d{i}", ".txt", Document(f"d{i}", "x" * size, "en")) for i in range(n)]


def test_default_worker_count_grows_with_the_input():
    cores = default_workers()
    if hasattr(os, "process_cpu_count"):
        assert cores == os.process_cpu_count()
    assert _workers_for(_items(30, 12_000), exhausted=True, requested=0) == 1  # start-up would not pay off
    big = _items(cores * 4, AUTO_CHARS_PER_WORKER // 2)
    assert _workers_for(big, exhausted=True, requested=0) == cores
    assert (
        _workers_for(_items(1, 5 * AUTO_CHARS_PER_WORKER), exhausted=True, requested=0) == 1
    )  # one document
    assert _workers_for(_items(2, 500), exhausted=False, requested=0) == cores  # more input to come
    assert _workers_for(_items(1, 500), exhausted=True, requested=3) == 3  # asked for explicitly
