"""Throughput of ``clinideid deid`` with 1 and 2 worker processes on generated English and Spanish notes.

    python benchmarks/workers_scaling.py [--languages en es] [--workers 1 2] [--chars 2400000] [--size 4000]

Each language's default pipeline runs (en: rules only; es: rules + the shipped neural tagger). For every
worker count the real command runs twice in a subprocess, on ``N`` and on ``2N`` generated notes; printed
per run: wall seconds and characters per wall second (what a user sees, start-up included), then the
*marginal* rate ``chars(2N) - chars(N)`` over ``seconds(2N) - seconds(N)`` (start-up cancels out) and the
start-up it implies (parent pipeline build, spawning the workers and each worker's own pipeline build).
Notes are made of random syllables and numbers: nothing here is a real person.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
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


def run(src: Path, out: Path, language: str, workers: int) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the command, its workers included) of one run."""
    cmd = [sys.executable, "-c", "from clinideid.cli import main; main()", "deid", str(src), "-o", str(out)]
    cmd += ["-l", language, "--ephemeral-key", "--no-progress", "--workers", str(workers), "--overwrite"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", nargs="+", default=["en", "es"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--chars", type=int, default=2_400_000, help="characters of the smaller input")
    parser.add_argument("--size", type=int, default=4000, help="characters per note")
    parser.add_argument("--es-share", type=float, default=0.25, help="es input size relative to --chars")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| language (pipeline) | workers | chars | wall s | CPU s | chars/s (wall) | marginal chars/s | start-up s |")
    print("|---|---|---|---|---|---|---|---|")
    baseline: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for language in args.languages:
            target = int(args.chars * (args.es_share if language == "es" else 1.0))
            small, large = Path(tmp, language, "small"), Path(tmp, language, "large")
            n_small = write_notes(small, language, target, args.size)
            n_large = write_notes(large, language, 2 * target, args.size)
            pipeline = "rules only" if language == "en" else "rules + neural"
            for workers in args.workers:
                t_small, _ = run(small, Path(tmp, "out"), language, workers)
                t_large, cpu = run(large, Path(tmp, "out"), language, workers)
                marginal = (n_large - n_small) / (t_large - t_small)
                startup = t_small - n_small / marginal
                wall_rate = n_large / t_large
                if workers == args.workers[0]:
                    baseline[language] = (wall_rate, marginal)
                base_wall, base_marginal = baseline[language]
                print(
                    f"| {language} ({pipeline}) | {workers} | {n_large:,} | {t_large:.1f} | {cpu:.1f} | "
                    f"{wall_rate:,.0f} ({wall_rate / base_wall:.2f}x) | "
                    f"{marginal:,.0f} ({marginal / base_marginal:.2f}x) | {startup:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
