"""Time of the residual-risk audit and of each language's default pipeline on adversarial text.

Usage (from the repository root)::

    PYTHONPATH=src .venv/bin/python benchmarks/adversarial_time.py                   # six languages
    PYTHONPATH=src .venv/bin/python benchmarks/adversarial_time.py --languages en de --full
    PYTHONPATH=src .venv/bin/python benchmarks/adversarial_time.py --sizes 10000 40000 --json times.json

Each text is one short unit repeated up to the size ("12-12-12-...", "Ab-Ab-Ab-..."): the trigger shapes
of each pattern of the audit (addresses, dates, phones, identifiers, postcodes, letter codes, numbers after
a cue, region codes, titles, ages, words; ``SHAPES``) and cues of each language's rule pack (``CUES``). A
pattern that reads to the end of such a run from every position of it takes time quadratic in its length;
one that takes linear time costs about 4 times more for 4 times the text.

For each language the audit (``audit_document``, nothing protected) and the default pipeline
(``Deidentifier.for_language``: detection, resolution and replacement) run on every shape at the first two
sizes, then on the ``--worst`` shapes slowest at the second size at the larger sizes (``--full``: every
shape at every size). Printed per language and task: the slowest shape's CPU seconds at each size and the
growth from each size to the next. Times are process CPU seconds (``time.process_time``), one run each.
No document text is printed beyond the repeated units themselves.
"""

from __future__ import annotations

import argparse
import itertools
import json
import secrets
import time
from collections.abc import Callable, Sequence

#: repetition units that stress each pattern of the audit (``clinideid.audit.residual``), by pattern
SHAPES: dict[str, tuple[str, ...]] = {
    "address": ("a.", "a-", "a.b", "1-", "a@", "x@y.", "www.", "a.com-"),
    "date": ("12-", "1.", "12.", "12/", "12.Jan.", "19"),
    "phone": ("12 ", "(12)", "+12 ", "12345"),
    "identifier": ("Ab-", "A1/", "a1-", "1A-", "-", "/", "é-", "_-"),
    "postcode": ("AB-1234 ", "12345 ", "M30 8AR "),
    "letter code": ("AB-1", "ABC 123", "ABC-", "A-"),
    "number after cue": ("No ", "#1", "No. 1-"),
    "region code": ("Abc, NC ", "Abc NC 1"),
    "title": ("Dr. ", "Mr ", "г. "),
    "age": ("12 years ", "1 "),
    "word": ("Ab'", "Ab ", "A", "1"),
}

#: cues of each language's rule pack: form keys, titles and address words, alone and before a name
CUES: dict[str, tuple[str, ...]] = {
    "en": ("Patient: ", "Name: Ab ", "Dr. Ab-", "Mr. Ab "),
    "es": ("Calle ", "Avd. ", "Nombre: Ab ", "Sr. Ab "),
    "fr": ("FINESS ", "Patient : Ab ", "M. Ab ", "Dr Ab-"),
    "de": ("Wohnhaft in: ", "Dr. med. ", "Patient: Ab ", "Herr Ab "),
    "it": ("Residente in: ", "Paziente: Ab ", "Sig. Ab ", "Dott. Ab-"),
    "ru": ("индекс ", "ФИО: Аб ", "пациент Аб ", "г. Аб-"),
}

LANGUAGES = tuple(CUES)
SIZES = (10_000, 40_000, 160_000)


def shapes(language: str) -> list[str]:
    """Every audit shape, then the cues of ``language``."""
    return [u for group in SHAPES.values() for u in group] + list(CUES[language])


def adversarial_text(unit: str, chars: int) -> str:
    """``unit`` repeated to exactly ``chars`` characters."""
    return (unit * (chars // len(unit) + 1))[:chars]


def cpu_seconds(run: Callable[[str], object], text: str) -> float:
    """Process CPU seconds of ``run(text)`` (other processes on the machine do not count)."""
    t0 = time.process_time()
    run(text)
    return time.process_time() - t0


def audit_runner(language: str) -> Callable[[str], object]:
    """The residual-risk audit of a text in ``language`` (no surrogates to protect)."""
    from clinideid.audit.residual import audit_document

    return lambda text: audit_document(text, language, [])


def pipeline_runner(language: str) -> Callable[[str], object]:
    """The default pipeline of ``language`` (detection, resolution, replacement), with a random key."""
    from clinideid.document import Document
    from clinideid.pipeline import Deidentifier

    deid = Deidentifier.for_language(language, secrets.token_bytes(32))
    return lambda text: deid.deidentify(Document("adversarial", text, language))


def measure(
    run: Callable[[str], object], units: Sequence[str], sizes: Sequence[int], worst: int | None
) -> dict[str, dict[int, float]]:
    """CPU seconds per unit and size; with ``worst``, only that many units (slowest at the second size)
    go on to the sizes after it. Each unit runs once on a short text first (lazy loading)."""
    for unit in units:
        run(adversarial_text(unit, 500))
    times: dict[str, dict[int, float]] = {u: {} for u in units}
    head = sizes if worst is None else sizes[:2]
    for unit in units:
        for size in head:
            times[unit][size] = cpu_seconds(run, adversarial_text(unit, size))
    if worst is not None and len(sizes) > 2:
        slowest = sorted(units, key=lambda u: -times[u][sizes[1]])[:worst]
        for unit in slowest:
            for size in sizes[2:]:
                times[unit][size] = cpu_seconds(run, adversarial_text(unit, size))
    return times


def rows(times: dict[str, dict[int, float]], sizes: Sequence[int], named: Sequence[str]) -> list[str]:
    """The units to print: the slowest at the largest size, then ``named`` ones measured at every size."""
    full = [u for u in times if all(s in times[u] for s in sizes)]
    slowest = max(full, key=lambda u: times[u][sizes[-1]])
    return list(dict.fromkeys([slowest, *(u for u in named if u in full)]))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="characters per text")
    ap.add_argument("--worst", type=int, default=6, help="shapes measured at the sizes after the second")
    ap.add_argument("--full", action="store_true", help="every shape at every size")
    ap.add_argument("--tasks", nargs="+", default=["audit", "pipeline"], choices=["audit", "pipeline"])
    ap.add_argument("--show", nargs="*", default=["12-", "Ab-"], help="shapes printed besides the slowest")
    ap.add_argument("--json", help="also write every time to this file")
    args = ap.parse_args(argv)
    sizes = sorted(args.sizes)
    runners = {"audit": audit_runner, "pipeline": pipeline_runner}
    head = " ".join(f"{f'{s // 1000}k chars':>10}" for s in sizes)
    grow = " ".join(f"{f'x{b // a}':>6}" for a, b in itertools.pairwise(sizes))
    print(f"{'lang':4} {'task':8} {'shape':12} {head} {grow}  (CPU seconds; growth)")
    out: dict[str, dict[str, dict[str, dict[int, float]]]] = {}
    for language in args.languages:
        for task in args.tasks:
            units = list(dict.fromkeys([*shapes(language), *args.show]))
            worst = None if args.full else args.worst
            run = runners[task](language)
            times = measure(run, units, sizes, worst)
            if worst is not None and len(sizes) > 2:  # the shapes asked for, at every size too
                for unit in args.show:
                    for size in sizes[2:]:
                        times[unit].setdefault(size, cpu_seconds(run, adversarial_text(unit, size)))
            out.setdefault(language, {})[task] = times
            for unit in rows(times, sizes, args.show):
                secs = [times[unit][s] for s in sizes]
                cells = " ".join(f"{t:9.2f}s" for t in secs)
                ratios = " ".join(f"{b / max(a, 1e-9):6.1f}" for a, b in itertools.pairwise(secs))
                print(f"{language:4} {task:8} {unit!r:12} {cells} {ratios}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
