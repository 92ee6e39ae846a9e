"""Throughput of ``Gazetteer.find`` on plain text with a large entry list.

    python benchmarks/gazetteer_speed.py [--mb 5] [--fuzzy] [--text FILE]

Builds a gazetteer from every Russian and Spanish list (about 50k entries, single- and multi-word) and
scans synthetic clinical-like text made of words from those lists mixed with filler words, so that
matches are frequent. Prints entries, text size, seconds and MB/s (best of three runs).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from clinideid.resources import Gazetteer, available_lists, load_list

FILLER_TEXT = (
    "el paciente refiere dolor abdominal de tres días de evolución sin fiebre ni vómitos , se "
    "realiza analítica con hemograma normal y se decide ingreso en planta para control ; "
    "пациент поступил с жалобами на боли в груди , назначено лечение и наблюдение ."
)
FILLER = FILLER_TEXT.split()


def build_entries() -> list[str]:
    entries: list[str] = []
    for lang in ("ru", "es"):
        for name in available_lists(lang):
            entries += load_list(lang, name)
    return entries


def make_text(entries: list[str], size: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        w = rng.choice(entries) if rng.random() < 0.15 else rng.choice(FILLER)
        words.append(w)
        length += len(w) + 1
    return " ".join(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=5.0, help="size of the text in MB of characters")
    ap.add_argument("--fuzzy", action="store_true", help="also allow one edit on unmatched long tokens")
    ap.add_argument("--text", type=Path, help="scan this UTF-8 file (repeated up to --mb) instead")
    args = ap.parse_args()
    entries = build_entries()
    t0 = time.perf_counter()
    gaz = Gazetteer(entries, fuzzy=1 if args.fuzzy else 0)
    build_s = time.perf_counter() - t0
    size = int(args.mb * 1_000_000)
    if args.text:
        sample = args.text.read_text("utf-8")
        text = (sample + "\n") * max(1, size // (len(sample) + 1))
    else:
        text = make_text(entries, size)
    best = float("inf")
    matches = 0
    for _ in range(3):
        t0 = time.perf_counter()
        matches = len(gaz.find(text))
        best = min(best, time.perf_counter() - t0)
    mb = len(text.encode("utf-8")) / 1e6
    print(
        f"entries={len(gaz)} build_s={build_s:.2f} text_chars={len(text)} text_mb_utf8={mb:.2f} "
        f"matches={matches} find_s={best:.2f} throughput_mb_s={mb / best:.2f} "
        f"chars_per_s={len(text) / best / 1e6:.2f}M fuzzy={args.fuzzy}"
    )


if __name__ == "__main__":
    main()
