"""Generated notes and a subprocess harness for the batch reliability tests (kill, SIGINT, concurrency).

Names are made of random syllables and numbers are random: nothing here is a real person.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

_SYLLABLES = ["ka", "zo", "mir", "tel", "van", "qui", "bro", "sen", "dax", "lu", "per", "wen"]
_FILLER = (
    "The patient was admitted with chest pain, treated with aspirin and discharged in stable condition. "
    "Follow-up in the cardiology clinic was arranged. "
)


def fake_name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()


def make_note(rng: random.Random, size: int = 2000) -> tuple[str, list[str]]:
    """A note of about ``size`` characters and the PHI strings planted in it."""
    first, last = fake_name(rng), fake_name(rng)
    mrn = str(rng.randint(1_000_000, 9_999_999))
    header = f"Patient: {first} {last}    MRN: {mrn}\nSeen on 11/02/2023 by Dr. {fake_name(rng)}.\n"
    body = _FILLER * max(1, (size - len(header)) // len(_FILLER))
    return header + body + f"\nMr. {last} agreed with the plan.\n", [first, last, mrn]


def write_text_notes(folder: Path, n: int, size: int = 2000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    planted: list[str] = []
    for i in range(n):
        text, phi = make_note(rng, size)
        (folder / f"note{i:03d}.txt").write_text(text, encoding="utf-8")
        planted.extend(phi)
    return planted


def write_jsonl_notes(path: Path, n: int, size: int = 2000, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    planted: list[str] = []
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            text, phi = make_note(rng, size)
            fh.write(json.dumps({"id": f"n{i:03d}", "text": text, "language": "en"}) + "\n")
            planted.extend(phi)
    return planted


def write_brat_notes(folder: Path, n: int, size: int = 2000, seed: int = 0) -> list[str]:
    planted = write_text_notes(folder, n, size, seed)
    for txt in folder.glob("*.txt"):
        txt.with_suffix(".ann").write_text("", encoding="utf-8")
    return planted


def deid_command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from clinideid.cli import main; main()", "deid", *args]


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        deid_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def run_to_end(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(deid_command(*args), capture_output=True, text=True, timeout=timeout)


def journal_lines(out: Path) -> int:
    path = out / ".clinideid" / "journal.jsonl"
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def wait_for_journal(out: Path, lines: int, proc: subprocess.Popen, timeout: float = 120) -> bool:
    """Wait until the journal has ``lines`` lines; False when the process ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if journal_lines(out) >= lines:
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    raise TimeoutError("the run made no progress")


def key_file(tmp_path: Path, label: bytes) -> Path:
    """A key file in ``tmp_path``: the SHA-256 of ``label`` in hex (a fixed, random-looking test key)."""
    key = tmp_path / "secret.key"
    key.write_text(hashlib.sha256(label).hexdigest() + "\n", encoding="ascii")
    return key


def output_files(out: Path) -> dict[str, bytes]:
    """Every file of an output folder except the run's own state and the summary (it holds timings)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".clinideid" not in p.parts and p.name != "summary.json"
    }
