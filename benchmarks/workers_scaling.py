"""Throughput of ``clinideid deid`` with 1 and 2 worker processes on generated English and Spanish notes.

    python benchmarks/workers_scaling.py [--languages en es] [--workers 1 2] [--chars 4800000] [--size 4000]

Each language's default pipeline runs (en: rules only; es: rules + the shipped neural tagger). For every
worker count the real command runs in a subprocess on the generated notes, and once on a single short note
(its start-up: imports, the command's own pipeline build, spawning the workers and their pipeline builds).
Printed per run: wall seconds, CPU seconds of the command itself (reading, writing, journal, its own
pipeline build) and of its workers, characters per wall second, and the start-up. The CPU split is what
explains a speed-up below 2 on a busy machine. Notes are made of random syllables and numbers: nothing
here is a real person.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYLLABLES = ["ka", "zo", "mir", "tel", "van", "qui", "bro", "sen", "dax", "lu", "per", "wen"]
TEMPLATES = {
    "en": (
        "Patient: {first} {last}    MRN: {number}\nSeen on 11/02/2023 by Dr. {other}.\n",
        "The patient was admitted with chest pain, treated with aspirin and discharged in stable "
        "condition. Follow-up in the cardiology clinic was arranged. ",
        "\nMr. {last} agreed with the plan.\n",
    ),
    "es": (
        "Paciente: {first} {last} {other}    NHC: {number}\nFecha de ingreso: 11/02/2023. "
        "Médico: Dra. {other} {first}.\n",
        "Varón que ingresa por dolor torácico, se trata con aspirina y se da de alta en situación estable. "
        "Se programa revisión en consultas externas de cardiología. ",
        "\nEl Sr. {last} está de acuerdo con el plan.\n",
    ),
}


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def write_notes(folder: Path, language: str, total_chars: int, size: int, seed: int = 0) -> int:
    """Notes of about ``size`` characters up to ``total_chars`` in all; returns the characters written."""
    rng = random.Random(seed)
    head, body, tail = TEMPLATES[language]
    folder.mkdir(parents=True, exist_ok=True)
    written, i = 0, 0
    while written < total_chars:
        names = {"first": _name(rng), "last": _name(rng), "other": _name(rng)}
        header = head.format(number=rng.randint(1_000_000, 9_999_999), **names)
        text = header + body * max(1, (size - len(header)) // len(body)) + tail.format(**names)
        (folder / f"note{i:05d}.txt").write_text(text, encoding="utf-8")
        written += len(text)
        i += 1
    return written


WRAPPER = """
import json, resource, sys
from clinideid.cli import main
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([own.ru_utime + own.ru_stime, workers.ru_utime + workers.ru_stime]), file=sys.stderr)
"""


def run(src: Path, out: Path, language: str, workers: int) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds of the command itself and of its workers, for one run."""
    cmd = [sys.executable, "-c", WRAPPER, "deid", str(src), "-o", str(out)]
    cmd += ["-l", language, "--ephemeral-key", "--no-progress", "--workers", str(workers), "--overwrite"]
    started = time.perf_counter()
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    own, children = json.loads(res.stderr.strip().splitlines()[-1])
    return wall, own, children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", nargs="+", default=["en", "es"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--chars", type=int, default=4_800_000, help="characters of English notes")
    parser.add_argument("--size", type=int, default=4000, help="characters per note")
    parser.add_argument("--es-share", type=float, default=0.25, help="Spanish input size relative to --chars")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| language (pipeline) | workers | chars | wall s | CPU s: command | CPU s: workers | chars/s (wall) "
          "| start-up s (1 note) |")
    print("|---|---|---|---|---|---|---|---|")
    baseline: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for language in args.languages:
            target = int(args.chars * (args.es_share if language == "es" else 1.0))
            notes, one = Path(tmp, language, "notes"), Path(tmp, language, "one")
            chars = write_notes(notes, language, target, args.size)
            write_notes(one, language, 1, args.size)
            pipeline = "rules only" if language == "en" else "rules + neural"
            for workers in args.workers:
                startup, _, _ = run(one, Path(tmp, "out"), language, workers)
                wall, own, children = run(notes, Path(tmp, "out"), language, workers)
                rate = chars / wall
                baseline.setdefault(language, rate)
                print(
                    f"| {language} ({pipeline}) | {workers} | {chars:,} | {wall:.1f} | {own:.1f} | "
                    f"{children:.1f} | {rate:,.0f} ({rate / baseline[language]:.2f}x) | {startup:.1f} |",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
