"""``LocalServer``: ``clinideid serve`` in a child process on a free loopback port (tests, benchmarks, demos)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """Start on ``__enter__`` (waits for ``/ready``), stop with SIGTERM on ``__exit__`` (then SIGKILL)."""

    def __init__(self, state_dir: Path, *extra_args: str, startup_timeout: float = 120.0) -> None:
        self.state_dir = state_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = list(extra_args)
        self.timeout = startup_timeout
        self.log_path = state_dir.parent / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None

    def __enter__(self) -> LocalServer:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-c", "from clinideid.cli import main; main()", "serve", "--port", str(self.port),
               "--host", "127.0.0.1", "--state-dir", str(self.state_dir), *self.args]  # fmt: skip
        if "--key-file" not in self.args:
            cmd.append("--ephemeral-key")
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with code {self.proc.returncode}; see {self.log_path}")
            try:
                if httpx.get(self.url + "/ready", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the server was not ready within {self.timeout:g} s; see {self.log_path}")

    def stop(self) -> int | None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.returncode = self.proc.returncode
            self._log.close()
        return self.returncode

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_text(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace") if self.log_path.exists() else ""
