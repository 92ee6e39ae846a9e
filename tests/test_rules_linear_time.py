"""Rule detection takes time linear in the length of the text, whatever the text.

A pattern tried at every position of a run that it reads to the end (``\\p{Lu}[\\p{L}\\-]*`` over
"A-A-A-..."), a lookbehind that scans back over every space before each position, a lazy repetition that
walks the rest of the line from each street type, a loop that compares every name with every other: each
costs time quadratic in the length of some stretch of text, so an export of a few megabytes made of such a
stretch takes hours. These tests build such stretches from each pack's own cues (form keys, titles, role
words, the words its patterns start with) and from generic ones (hyphens, apostrophes, digits, separators,
capitalised words, spaces, one-line records), time the rules on ``n`` and ``4 n`` repetitions and check the
growth: about 4 for linear time, 16 for quadratic; the bound is 8, on the best of several timings.

By default each pack is checked on a deterministic selection of its cues; ``CLINIDEID_LINEAR_ALL=1`` checks
every cue of every pack (several minutes).

The residual-risk audit and each language's whole default pipeline (detection with its models,
resolution, replacement) are checked the same way on the audit's trigger shapes and the packs' cues
(``benchmarks/adversarial_time.py``, which measures them at 10k, 40k and 160k characters): 16 times the
text must cost less than 40 times the CPU time (about 16 for linear time, 256 for quadratic).
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import regex

from clinideid.detect.rules import RuleEngine, compile_pack, load_merged_pack
from clinideid.detect.rules import propagate as propagation
from clinideid.detect.rules.compiler import expand
from clinideid.detect.rules.fieldtable import packaged_table
from clinideid.detect.rules.schema import PropagateSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from adversarial_time import (
    CUES,
    SHAPES,
    adversarial_text,
    audit_runner,
    cpu_seconds,
    pipeline_runner,
)

LANGUAGES = ["en", "es", "fr", "de", "it", "ru"]
GROWTH_BOUND = 8.0  # for 4 times more text; linear time gives about 4, quadratic about 16
TARGET_S = 0.02  # the smaller run takes about this long
MAX_CHARS = 400_000
DERIVED_PER_PACK = (8, 4)  # cue words and pattern words taken from each pack by default

# repetitions that stress the shapes every pack shares: hyphenated and apostrophised words, initials,
# digits with separators, punctuation runs, capitalised words, whitespace, table rows
GENERIC = [
    "Dr. ",
    "Smith-",
    "O'",
    "Ab’",
    "A-",
    "Ab-Cd ",
    "A. ",
    "Ab, ",
    "1",
    "1-",
    "12 ",
    "-",
    ".",
    ", ",
    " ",
    "\u00a0|",
]


# stretches that once took quadratic time (kept as regression cases)
KNOWN = {
    "en": ["Patient: "],
    "es": ["Calle ", "Avd. "],
    "fr": ["FINESS "],
    "de": ["Wohnhaft in: ", "Dr. med. "],
    "it": ["Residente in: "],
    "ru": ["индекс "],
}


@cache
def _engine(language: str) -> RuleEngine:
    return RuleEngine(compile_pack(language))


_CASE_CLASS = regex.compile(r"\[(\p{Lu})\p{Ll}\](?:\(\?i:)?")  # "[Hh](?i:usband)" -> "Husband)"
_WORD = regex.compile(r"(?<![\\\p{L}])\p{Lu}[\p{L}.'\-]*|(?<![\\\p{L}])\p{L}{2,}[.]?")
_ESCAPES = regex.compile(r"\\[pP]\{\w+\}|\\[a-zA-Z]|\(\?[a-zA-Z\-]+[:)]|\(\?<?[=!]|\[[^\]]*\]")


def _first_words(pattern: str, k: int = 2) -> list[str]:
    """The first ``k`` literal words of a (definition-expanded) pattern: what it starts with."""
    words: list[str] = []
    for m in _WORD.finditer(_ESCAPES.sub(" ", _CASE_CLASS.sub(r"\1", pattern))):
        w = m.group().rstrip("'-")
        if len(w) >= 2 and w not in words:
            words.append(w)
        if len(words) == k:
            break
    return words


def _spread(items: list[str], k: int) -> list[str]:
    """``k`` of ``items``, evenly spaced (all of them with CLINIDEID_LINEAR_ALL=1)."""
    items = list(dict.fromkeys(items))
    if os.environ.get("CLINIDEID_LINEAR_ALL") or len(items) <= k:
        return items
    return [items[int(i * len(items) / k)] for i in range(k)]


@cache
def derived_units(language: str) -> tuple[str, ...]:
    """Repetition units built from the pack's own cues -- form keys, cue words and titles, each alone and
    followed by a name-like word -- and from the words its regex patterns start with (street types,
    role words, month names...)."""
    merged = load_merged_pack(language)
    cues: list[str] = []
    words: list[str] = []
    for ps in merged.passes:
        for rule, _src in ps.rules:
            if rule.kind == "field":
                cues += [f"{rule.keys[0]}: ", f"{rule.keys[-1]}: Ab "]
            elif rule.kind == "fields":
                table = packaged_table(*(rule.tables or [language]))
                for form in table.bare_forms[:: max(1, len(table.bare_forms) // 4)]:
                    cues += [f"{form} ", f"{form} 1.2.1950 Ab "]
                for key in list(table.labels)[:: max(1, len(table.labels) // 4)]:
                    cues += [f"{key}: ", f"{key}: Ab, "]
            elif rule.kind == "context_name":
                for cue in rule.cues[:2]:
                    cues += [f"{cue} ", f"{cue}: Ab "]
                for pattern in rule.cue_patterns[:1]:
                    cues += [f"{w} Ab " for w in _first_words(expand(pattern, merged.definitions, "test"))]
            elif rule.kind == "regex":
                found = _first_words(expand(rule.pattern, merged.definitions, "test"))
                words += [f"{w} " for w in found] + [f"{w}. Ab-" for w in found[:1]]
    n_cues, n_words = DERIVED_PER_PACK
    cues = _spread(cues, n_cues)
    return tuple(dict.fromkeys(cues + _spread(words, n_words + n_cues - len(cues))))


def _names(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct invented two-word names ("Kobaq Zutelvan")."""
    rng = random.Random(seed)
    syll = ["ba", "ko", "zu", "mi", "te", "lor", "van", "qui", "dre", "sel", "pho", "gar", "nis", "tul"]
    out = []
    for i in range(n):
        first = "".join(rng.choice(syll) for _ in range(2)) + "q"
        last, k = "", i
        for _ in range(4):  # the index written in syllables: every surname differs
            last += syll[k % len(syll)]
            k //= len(syll)
        out.append(f"{first.capitalize()} {last.capitalize()}")
    return out


KEYS = {"en": "Name", "es": "Nombre", "fr": "Patient", "de": "Patient", "it": "Paziente", "ru": "ФИО"}
TITLES = {"en": "Mr.", "es": "Sr.", "fr": "M.", "de": "Herr", "it": "Sig.", "ru": "пациент"}


def record_builders(language: str) -> dict[str, Callable[[int], str]]:
    """Texts of ``n`` records on one line, with distinct names (propagation, field search, merging)."""
    key, title = KEYS[language], TITLES[language]
    return {
        "records on one line": lambda n: " | ".join(f"{key}: {nm} | 01.02.1950" for nm in _names(n)),
        "distinct titled names": lambda n: " ".join(f"{title} {nm} kam." for nm in _names(n)),
        "one name repeated": lambda n: f"{title} Quorvath Belindrax. " + "Quorvath, Belindrax " * n,
        "key and spaces": lambda n: f"{key}:" + " " * n + "Ab",
        "label cells on one line": lambda n: " | ".join(f"{key} | {nm}" for nm in _names(n)),
        "table under a header row": lambda n: (
            f"| {key} | {key} |\n|---|---|\n" + "".join(f"| {nm} | 01.02.1950 |\n" for nm in _names(n))
        ),
    }


def _best(engine: RuleEngine, text: str, reps: int) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(reps):  # CPU time: other processes (tests run in parallel) do not count
            t0 = time.process_time()
            engine.run(text)
            best = min(best, time.process_time() - t0)
    finally:
        gc.enable()
    return best


def growth(engine: RuleEngine, build: Callable[[int], str]) -> tuple[float, int, float, float]:
    """(time(4n) / time(n), n, time(n), time(4n)) with n such that time(n) is about ``TARGET_S``."""
    n = max(1, 1000 // max(1, len(build(1))))
    t = _best(engine, build(n), 1)
    while t < TARGET_S and len(build(n)) * 4 < MAX_CHARS:
        n = max(n + 1, int(n * min(8.0, TARGET_S / max(t, 1e-4) * 1.2)))
        t = _best(engine, build(n), 1)
    small, large = build(n), build(4 * n)
    gc.collect()
    t1, t4 = _best(engine, small, 1), _best(engine, large, 1)
    if t4 / t1 > GROWTH_BOUND * 0.7:  # timing noise on a busy machine: look again before judging
        t1, t4 = min(t1, _best(engine, small, 3)), min(t4, _best(engine, large, 3))
    return t4 / t1, n, t1, t4


def _check(language: str, cases: dict[str, Callable[[int], str]]) -> None:
    engine = _engine(language)
    engine.run("warm-up 12/03/2020")
    slow = []
    for name, build in cases.items():
        ratio, n, t1, t4 = growth(engine, build)
        if ratio >= GROWTH_BOUND:
            slow.append(f"{name!r} x{n}: {t1 * 1000:.0f} ms -> x{4 * n}: {t4 * 1000:.0f} ms (x{ratio:.1f})")
    assert not slow, f"{language}: super-linear time on " + "; ".join(slow)


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: unit * n


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_rules_time_is_linear_on_repeated_cues(language):
    units = list(dict.fromkeys([*derived_units(language), *KNOWN[language], *GENERIC]))
    _check(language, {repr(u): _repeat(u) for u in units})


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_rules_time_is_linear_on_long_records(language):
    _check(language, record_builders(language))


def test_every_pack_yields_cues_to_test():
    for language in LANGUAGES:
        units = derived_units(language)
        assert len(units) >= 10, language
        assert all(u.strip() for u in units)


# -- propagation: one pass over the text, whatever the number of names -----------------------------


def _seed(text: str) -> propagation.Seed:
    return propagation.Seed(text, "PATIENT", 0.9, "test/rule", PropagateSpec())


def test_propagation_word_scan_finds_what_the_search_finds(monkeypatch):
    """With many names the text is read word by word instead of searched once per name: same mentions."""
    rng = random.Random(3)
    pieces = [
        "Ana",
        "ana",
        "O'Neil",
        "Neil",
        "Martín-Gómez",
        "Gómez",
        "Martín",
        "Smith",
        "SMITH",
        "J.",
        "de",
        "la",
        "-",
        "'",
        " ",
        "  ",
        "\n",
        ",",
        "(",
        "3",
        "Ana-Maria",
        "x",
        "Gómez2",
        "é",
    ]
    names = [
        "Ana Gómez",
        "O'Neil",
        "Martín-Gómez Smith",
        "Ana",
        "J. Smith",
        "Neil de la Smith",
        "Ana-Maria O'Neil",
    ]
    for _ in range(1500):
        text = "".join(
            rng.choice(pieces) + rng.choice(["", " ", " ", "\t", "-", "'"]) for _ in range(rng.randint(1, 40))
        )
        seeds = [_seed(n) for n in rng.sample(names, rng.randint(1, 4))]
        found = []
        for limit in (64, -1):
            monkeypatch.setattr(propagation, "_FIND_LIMIT", limit)
            hits = propagation.find_variants(seeds, text, connectors=frozenset(["de", "la"]), allowlist=None)
            found.append([(s, e, seed.text) for s, e, seed in hits])
        assert found[0] == found[1], text


def test_propagation_with_thousands_of_names_is_linear():
    def run(n: int) -> float:
        names = _names(n, seed=11)
        text = " ".join(f"{nm} und {nm.split()[1]}." for nm in names)
        seeds = [_seed(nm) for nm in names]
        t0 = time.perf_counter()
        hits = propagation.find_variants(seeds, text, connectors=frozenset(), allowlist=None)
        assert len(hits) >= n
        return time.perf_counter() - t0

    run(50)
    small = min(run(500) for _ in range(2))
    large = min(run(2000) for _ in range(2))
    assert large / small < GROWTH_BOUND, (small, large)


# -- the residual-risk audit and the whole default pipeline ------------------------------------------

SMALL = 1_000  # characters of the smaller text
FACTOR = 16  # the larger text is this many times longer
# linear time gives about 16 (up to about 30 where the larger text no longer fits the processor's caches),
# quadratic about 256
FACTOR_BOUND = 40.0


def _slow_shapes(run: Callable[[str], object], units: list[str]) -> list[str]:
    """The units on which ``run`` takes more than ``FACTOR_BOUND`` times the CPU time for ``FACTOR`` times
    the text, described for the failure message."""
    run(adversarial_text("warm-up Ab 12/03/2020 ", 200))
    slow = []
    for unit in units:
        small, large = adversarial_text(unit, SMALL), adversarial_text(unit, SMALL * FACTOR)
        t1 = min(cpu_seconds(run, small) for _ in range(3))
        t16 = cpu_seconds(run, large)
        if t16 / t1 >= FACTOR_BOUND * 0.6:  # a busy machine (a pause of the process)? look again before judging
            t1 = min(t1, *(cpu_seconds(run, small) for _ in range(3)))
            t16 = min(t16, *(cpu_seconds(run, large) for _ in range(2)))
        if t16 / t1 >= FACTOR_BOUND:
            slow.append(f"{unit!r}: {t1 * 1000:.1f} ms -> {t16 * 1000:.0f} ms (x{t16 / t1:.0f})")
            if len(slow) == 3:  # enough to go on; the rest would only make the failure slow
                break
    return slow


def test_audit_time_is_linear_on_the_trigger_shapes_of_each_of_its_patterns():
    """Every pattern of the audit, fed long runs of what it looks for ("12-12-...", "Ab-Ab-...")."""
    units = [unit for group in SHAPES.values() for unit in group]
    slow = _slow_shapes(audit_runner("en"), units)
    assert not slow, "audit: super-linear time on " + "; ".join(slow)


@pytest.mark.parametrize("language", LANGUAGES)
def test_audit_time_is_linear_on_words_in_every_language(language):
    """The word lists differ by language: capitalised words, names after titles, a pack's cues."""
    units = [*SHAPES["word"], *SHAPES["title"], *CUES[language][:2]]
    slow = _slow_shapes(audit_runner(language), units)
    assert not slow, f"audit ({language}): super-linear time on " + "; ".join(slow)


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_default_pipeline_time_is_linear(language):
    """Detection (models included), resolution and replacement, on the shapes that once took quadratic
    time in the audit and on cues of the language's pack (each alone and before a hyphenated name)."""
    units = ["12-", "Ab-", CUES[language][0], CUES[language][2]]
    slow = _slow_shapes(pipeline_runner(language), units)
    assert not slow, f"default {language} pipeline: super-linear time on " + "; ".join(slow)
