"""Generated table rows, a throw-away PostgreSQL server, and helpers for the table and stream tests.

Names and numbers are invented (random syllables, random digits); nothing here is a real person.
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from batch_fixtures import deid_command, fake_name, make_note

#: the note every test plants; its PHI must be absent from every output
FIXED_NOTE = "Patient John Smith, DOB 01/02/1950, MRN 1234567, seen at St. Mary's Hospital, Boston."
FIXED_PHI = ("John Smith", "Smith", "01/02/1950", "1234567", "St. Mary's")


def write_key(folder: Path) -> Path:
    """A fixed secret key (surrogates, hence these tests, are the same on every run)."""
    from clinideid.transform.keys import save_key

    return save_key(folder / "secret.key", bytes(range(7, 39)))


def leaked(phi: Iterable[str], text: str) -> list[str]:
    """The PHI strings found in ``text`` as whole words (a surrogate "Johnson" does not leak "John")."""
    return [p for p in phi if re.search(rf"(?<!\w){re.escape(p)}(?!\w)", text)]


def make_rows(n: int, seed: int = 0, size: int = 300) -> tuple[list[dict], list[str]]:
    """``n`` rows (id, note, comment, ward, language) and the PHI strings planted in their text columns."""
    rng = random.Random(seed)
    rows, planted = [], []
    for i in range(n):
        note, phi = make_note(rng, size)
        if i == 0:
            note = FIXED_NOTE
        comment = f"Called by Dr. {fake_name(rng)} Wenzel on 05/06/2021."
        rows.append(
            {"id": i + 1, "note": note, "comment": comment, "ward": f"ward {i % 7}", "language": "en"}
        )
        planted.extend(phi)
    return rows, planted


def find_initdb() -> str | None:
    """``initdb`` on PATH or in Debian's ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which("initdb")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL server in a temporary folder; yield its base URL (``postgresql+psycopg://…``).

    PostgreSQL refuses to run as root: as root, the server runs as the ``postgres`` user (or ``nobody``).
    """
    initdb = find_initdb()
    assert initdb is not None
    bindir = Path(initdb).resolve().parent
    root = Path(tempfile.mkdtemp(prefix="clinideid-pg-"))
    data = root / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = "postgres" if _user_exists("postgres") else "nobody"
        shutil.chown(root, user)
        prefix = ["runuser", "-u", user, "--"]
    port = _free_port()
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    try:
        subprocess.run(
            [
                *prefix,
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
            env=env,
        )
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [
                *prefix,
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            env=env,
        )
        shutil.rmtree(root, ignore_errors=True)


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def start_deid(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(deid_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def kill_when(proc: subprocess.Popen, ready, timeout: float = 180) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()`` is true; False when the process ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    proc.kill()
    raise TimeoutError("the run made no progress")
