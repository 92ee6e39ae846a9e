"""Learning curve of the CRF on MEDDOCAN: dev strict F1 for 10/25/50/100% of the training documents.

    python benchmarks/learning_curve.py [--corpora ../shared/corpora] [--c1 0.05 --c2 0.01] [--seed 1]

Subsets are deterministic and nested (``clinideid.train.data.subset``: the 10% documents are inside the 25%
ones, and so on). Every point uses the shipped feature configuration with one fixed (c1, c2), canonical or
native labels (``--native``), and is scored on the whole MEDDOCAN dev split.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

from clinideid.train.config import parse_train_config
from clinideid.train.crf import train_crf
from clinideid.train.data import read_training_corpus, subset

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from build_models import CONFIG  # noqa: E402  (the shipped configuration)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--fractions", default="0.1,0.25,0.5,1.0")
    parser.add_argument("--c1", type=float, default=0.05)
    parser.add_argument("--c2", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--native", action="store_true", help="native MEDDOCAN labels instead of canonical")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    label_set = "native" if args.native else "canonical"
    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", label_set)
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", label_set)
    cfg = parse_train_config({**CONFIG, "c1": [args.c1], "c2": [args.c2]})
    print(f"{'fraction':>8} {'docs':>5} {'P':>7} {'R':>7} {'F1':>7} {'seconds':>8}", flush=True)
    for fraction in (float(f) for f in args.fractions.split(",")):
        part = subset(train, fraction, args.seed)
        with tempfile.TemporaryDirectory() as tmp:
            result = train_crf(
                part,
                dev,
                cfg,
                out_dir=Path(tmp) / "m",
                name=f"curve-{fraction}",
                seed=args.seed,
                language="es",
                label_set="meddocan" if args.native else "canonical",
            )
        s = result.metadata.dev_metrics["strict"]
        print(
            f"{fraction:>8.0%} {len(part):>5} {s['precision']:>7.4f} {s['recall']:>7.4f} {s['f1']:>7.4f} "
            f"{result.seconds:>8.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
