"""clinideid side of ``benchmarks/speed_compare.py``: one pipeline, timed in a fresh process.

    PYTHONPATH=src .venv/bin/python benchmarks/clinideid_driver.py DOCS.jsonl --language en --pipeline rules

``DOCS.jsonl`` has one ``{"set": ..., "id": ..., "text": ...}`` object per line. ``--pipeline rules`` is a
config whose only detector is ``{type: rules, language: LANG}``; ``default`` is
``Deidentifier.for_language(LANG)``. Both keep the language's default operators (surrogates, date shift)
with a random key, so the time covers detection, resolution and replacement. Prints one JSON object
with the same fields as ``presidio_driver.py``; no document text is printed.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

from clinideid.config import PipelineConfig, default_config  # noqa: E402
from clinideid.document import Document  # noqa: E402
from clinideid.pipeline import Deidentifier  # noqa: E402

IMPORTED = time.perf_counter()
WARM_UP = {
    "en": "Seen on 03/12/2020 by Dr. Alan Moore, phone 555-201-3344, mail a.moore@example.org.",
    "es": "Visto el 03/12/2020 por el Dr. Alberto Moreno, teléfono 912 345 678, correo a.moreno@example.org.",
}


def build(language: str, pipeline: str) -> Deidentifier:
    key = os.urandom(32)
    if pipeline == "default":
        return Deidentifier.for_language(language, key)
    config = default_config(language).model_dump()
    config["detectors"] = [{"type": "rules", "language": language}]
    return Deidentifier(PipelineConfig.model_validate(config), key)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("docs", help="JSONL file of {set, id, text}")
    ap.add_argument("--language", required=True)
    ap.add_argument("--pipeline", choices=["rules", "default"], required=True)
    args = ap.parse_args()
    sets: dict[str, list[Document]] = {}
    read0 = time.perf_counter()
    with open(args.docs, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            sets.setdefault(row["set"], []).append(Document(row["id"], row["text"], args.language))
    reading = time.perf_counter() - read0
    deid = build(args.language, args.pipeline)
    ready = time.perf_counter()
    first = next(iter(sets.values()))[0]
    t0 = time.perf_counter()
    deid.deidentify(first)
    first_doc = time.perf_counter() - t0
    deid.deidentify(Document("warm-up", WARM_UP.get(args.language, WARM_UP["en"]), args.language))
    timings = {}
    for name, docs in sets.items():
        cpu0, wall0 = time.process_time(), time.perf_counter()
        found = sum(len(deid.deidentify(doc).spans) for doc in docs)
        timings[name] = {
            "docs": len(docs),
            "cpu_s": time.process_time() - cpu0,
            "wall_s": time.perf_counter() - wall0,
            "entities": found,
        }
    detectors = ", ".join(spec["type"] for spec in deid.config.detectors)
    json.dump(
        {
            "import_s": IMPORTED - STARTED,
            "ready_s": ready - STARTED - reading,
            "first_doc_s": first_doc,
            "sets": timings,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "pipeline": f"clinideid {args.language} {args.pipeline} ({detectors})",
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
