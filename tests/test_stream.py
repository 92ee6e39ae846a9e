"""``clinideid deid -``: JSONL on stdin to de-identified JSONL on stdout, through real pipes."""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
from pathlib import Path

from batch_fixtures import deid_command
from table_fixtures import FIXED_NOTE, FIXED_PHI, leaked, make_rows, write_key

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def records(n: int) -> tuple[list[dict], list[str]]:
    rows, planted = make_rows(n, seed=7)
    return [{"id": f"r{r['id']}", "text": r["note"], "doctor": r["comment"]} for r in rows], planted


def test_stream_one_output_line_per_input_line_in_order(tmp_path: Path):
    recs, planted = records(5)
    lines = [json.dumps(r) for r in recs[:2]]
    lines += ["", "{not json", json.dumps({"id": "no-text", "body": "Patient: Elvira Quandt"})]
    lines += [json.dumps(r) for r in recs[2:]]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    proc = subprocess.run(
        deid_command("-", "--language", "en", "--key-file", str(write_key(tmp_path))), input=data, capture_output=True, env=ENV,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr.decode()  # two bad lines
    out = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert [o["id"] for o in out] == ["r1", "r2", "stdin-4", "no-text", "r3", "r4", "r5"]
    assert "error" in out[2] and "invalid JSON" in out[2]["error"] and set(out[2]) == {"id", "error"}
    assert "no text field" in out[3]["error"]
    assert all("text" in o and "doctor" in o for i, o in enumerate(out) if i not in (2, 3))
    stdout = proc.stdout.decode("utf-8")
    assert leaked((*FIXED_PHI, *planted, "Wenzel", "Elvira", "Quandt"), stdout) == []
    stderr = proc.stderr.decode("utf-8")
    assert "5/7 records de-identified, 2 failed" in stderr
    assert leaked((*FIXED_PHI, *planted, "Elvira", "Quandt"), stderr) == []


def test_stream_answers_each_line_before_the_input_ends(tmp_path: Path):
    """Flushed per line: a record comes back while stdin is still open (an interactive pipe works)."""
    proc = subprocess.Popen(
        deid_command("-", "-l", "en", "--key-file", str(write_key(tmp_path))),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip
    try:
        for i in range(3):
            proc.stdin.write((json.dumps({"id": f"x{i}", "text": FIXED_NOTE}) + "\n").encode())
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 120)
            assert ready, "no answer while stdin stays open"
            answer = json.loads(proc.stdout.readline())
            assert answer["id"] == f"x{i}" and leaked(FIXED_PHI, answer["text"]) == []
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()


def test_stream_stops_quietly_when_the_reader_goes_away(tmp_path: Path):
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps({"id": f"n{i}", "text": FIXED_NOTE}) + "\n" for i in range(400)))
    command = " ".join(shlex.quote(a) for a in deid_command("-", "-l", "en", "--ephemeral-key"))
    script = (
        f'set -o pipefail; {command} < {shlex.quote(str(src))} | head -n 2; echo "status=${{PIPESTATUS[0]}}"'
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, env=ENV, timeout=300)
    out = proc.stdout.decode().splitlines()
    assert len(out) == 3 and out[-1] == "status=141", proc.stdout.decode() + proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode() and "BrokenPipe" not in proc.stderr.decode()


def test_stream_refuses_an_output_folder(tmp_path: Path):
    proc = subprocess.run(
        deid_command("-", "-o", str(tmp_path / "out"), "-l", "en", "--ephemeral-key"),
        input=b"", capture_output=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2 and b"stdout" in proc.stderr and proc.stdout == b""
    assert not (tmp_path / "out").exists()
