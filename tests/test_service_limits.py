"""The service under a request that stalls beyond the reach of the time limit's alarm: ``/health`` keeps
answering within a second, the request gets 504 at the limit and its worker process is killed and replaced,
and a short request queued behind it is served.

The server is ``clinideid serve`` in a real process, started from a script that adds one test operator
(it stalls with SIGALRM ignored, as native code that never returns to Python would); its worker processes
import the script, so the stall runs in the real worker pool. No wall time is asserted but the one the
service promises: ``/health`` within 1 s.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from clinideid.service.local import free_port
from limits_fixtures import STALL_MARKER, stalling_script

pytestmark = pytest.mark.slow


def _workers(pid: int) -> set[int]:
    """The worker processes of the server ``pid`` (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and b"spawn_main" in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def _server(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen, str]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        str(stalling_script(tmp_path)),
        "serve",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    cmd += ["--state-dir", str(tmp_path / "state"), "--ephemeral-key", *args]
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "server.log").read_text("utf-8", "replace")
            try:
                if httpx.get(url + "/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield proc, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_a_stalled_request_is_stopped_at_the_limit_and_health_keeps_answering(tmp_path: Path):
    with _server(tmp_path, "--language", "en", "--workers", "1", "--time-limit", "2") as (proc, url):
        before = _workers(proc.pid)
        assert len(before) == 1
        answers: dict[str, httpx.Response] = {}

        def post(name: str, body: dict) -> None:
            answers[name] = httpx.post(url + "/v1/deidentify", json=body, timeout=300)

        stall_body = {
            "text": f"Seen by Dr. Zorvak Quimbel. {STALL_MARKER}",
            "operators": {"default": {"operator": "stall_on_marker"}},
        }
        stalled = threading.Thread(target=post, args=("stalled", stall_body))
        short = threading.Thread(target=post, args=("short", {"text": "Seen by Dr. Keller."}))
        stalled.start()
        time.sleep(0.5)
        short.start()  # queued behind the stalled request (one worker)
        slowest = 0.0
        with httpx.Client(base_url=url, timeout=5) as probe:
            while stalled.is_alive() or short.is_alive():
                started = time.monotonic()
                assert probe.get("/health").json() == {"status": "ok"}
                slowest = max(slowest, time.monotonic() - started)
                time.sleep(0.1)
        assert answers["stalled"].status_code == 504, answers["stalled"].text
        assert "time limit of 2 s" in answers["stalled"].text and "stopped" in answers["stalled"].text
        assert "Zorvak" not in answers["stalled"].text
        assert answers["short"].status_code == 200, answers["short"].text
        assert "Keller" not in answers["short"].json()["text"]
        print(f"slowest /health answer while the worker stalled and was replaced: {slowest:.3f} s")
        assert slowest < 1.0
        # the stalled worker was killed, another took its place
        [old] = before
        deadline = time.monotonic() + 30
        while _alive(old) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(old)
        after = _workers(proc.pid)
        assert len(after) == 1 and old not in after
    assert not any(_alive(pid) for pid in after), "a worker outlived the server"
    assert "Zorvak" not in (tmp_path / "server.log").read_text("utf-8", "replace")
