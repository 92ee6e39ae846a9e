"""Detection quality and speed of a default pipeline on the annotated corpora in ../shared/corpora.

For each corpus: token-level binary precision/recall/F1 (did each PHI token get caught, whatever its
label), entity-level strict P/R/F1 per canonical category, throughput (characters per second on one core)
and peak memory. Gold labels are mapped onto the canonical scheme with the corpus's mapping file.

    python benchmarks/deid_corpora.py                      # all corpora, rules only
    python benchmarks/deid_corpora.py --corpus meddocan    # one corpus
    python benchmarks/deid_corpora.py --pipeline default   # the packaged default pipeline (rules + models)
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from clinideid.config import OperatorSpec, default_config
from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.evaluate.prepare import join_adjacent
from clinideid.formats import read_corpus
from clinideid.pipeline import Deidentifier

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = ROOT.parent / "shared" / "corpora"


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    language: str
    scheme: str
    note: str


CORPORA = {
    "meddocan": CorpusSpec("meddocan", "es", "meddocan", "MEDDOCAN dev (250 documents)"),
    "eds": CorpusSpec("eds", "fr", "eds_pseudo", "EDS-Pseudo held-out 20% (seed 1, as the French CRF)"),
    "presidio": CorpusSpec("presidio", "en", "presidio_synth", "Presidio synthetic sentences (all 1,500)"),
}


def load_gold(spec: CorpusSpec, corpora: Path) -> list[Document]:
    if spec.name == "meddocan":
        return read_corpus(corpora / "meddocan" / "dev", "brat")
    if spec.name == "eds":
        from clinideid.train.data import holdout_split, read_training_corpus

        # the same held-out 20% as the shipped French CRF (scripts/build_models.py), labels made canonical
        docs = read_training_corpus(
            corpora / "eds-pseudo" / "train.jsonl", "jsonl", "eds_pseudo", "canonical"
        )
        held_out = holdout_split(docs, 0.2, seed=1)[1]
        # EDS-Pseudo annotates first name and surname apart; whole-name spans are scored against the join
        return [join_adjacent(d, ("PERSON",), "PERSON") for d in held_out]
    return read_corpus(corpora / "presidio-synth" / "synth_dataset_v2.json", "presidio")


def detection_pipeline(language: str, pipeline: str) -> Deidentifier:
    cfg = default_config(language)
    if pipeline == "rules":
        cfg = cfg.model_copy(update={"detectors": [{"type": "rules", "language": language}]})
    # detection only: a key-free operator keeps the pipeline buildable without secrets
    cfg = cfg.model_copy(update={"operators": {"default": OperatorSpec(operator="tag")}})
    return Deidentifier(cfg)


def run(spec: CorpusSpec, corpora: Path, pipeline: str) -> dict:
    gold = load_gold(spec, corpora)
    deid = detection_pipeline(spec.language, pipeline)
    deid.detect(Document("warm-up", "Warm-up text 12/03/2020.", spec.language))  # load lists and models
    started = time.process_time()
    system = []
    for doc in gold:
        spans, _ = deid.detect(Document(doc.id, doc.text, spec.language))
        system.append(Document(doc.id, doc.text, spec.language, spans=tuple(spans)))
    cpu = time.process_time() - started
    chars = sum(len(d.text) for d in gold)
    binary = evaluate(gold, system, level="binary", modes=["token", "strict"], scheme=spec.scheme)
    category = evaluate(gold, system, level="category", modes=["strict"], scheme=spec.scheme)
    return {
        "spec": spec,
        "docs": len(gold),
        "token": binary["token"].micro,
        "entity": binary["strict"].micro,
        "per_category": category["strict"].per_label(),
        "chars_per_sec": chars / cpu if cpu else float("nan"),
        "chars": chars,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--corpus", choices=[*CORPORA, "all"], default="all")
    ap.add_argument("--pipeline", choices=["rules", "default"], default="rules")
    args = ap.parse_args(argv)
    if not args.corpora.is_dir():
        print(f"corpora folder {args.corpora} not found; pass --corpora", file=sys.stderr)
        return 2
    names = list(CORPORA) if args.corpus == "all" else [args.corpus]
    results = [run(CORPORA[n], args.corpora, args.pipeline) for n in names]
    print(f"\npipeline: {args.pipeline}\n")
    print(
        "| corpus | lang | docs | token P | token R | token F1 | entity P (binary) | entity R | entity F1 | chars/s/core |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        t, e = r["token"], r["entity"]
        print(
            f"| {r['spec'].note} | {r['spec'].language} | {r['docs']} | {t.precision:.3f} | {t.recall:.3f} | "
            f"{t.f1:.3f} | {e.precision:.3f} | {e.recall:.3f} | {e.f1:.3f} | {r['chars_per_sec']:,.0f} |"
        )
    for r in results:
        print(f"\nentity strict per category — {r['spec'].note}\n")
        print("| category | support | P | R | F1 |")
        print("|---|---|---|---|---|")
        for label, c in sorted(r["per_category"].items()):
            print(f"| {label} | {c.support} | {c.precision:.3f} | {c.recall:.3f} | {c.f1:.3f} |")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (max RSS): {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
