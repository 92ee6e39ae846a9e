"""Cross-lingual training: French EDS-Pseudo as target, Spanish MEDDOCAN as source.

    python benchmarks/cross_lingual.py [--strategies target source mixed source_then_target] [--seeds 1 2 3]
        [--epochs 30] [--source-epochs 10] [--jobs 2] [--out runs/cross_lingual] [--corpora ../shared/corpora]

The French corpus is split once: a deterministic 20% held out (seed 1, the split the shipped French CRF
uses as dev; no neural setting was tuned on it) for the scores below, and 10% of the rest (per seed) as the
dev set that selects the epoch. Both corpora are read onto canonical labels. Strategies:

- ``target``: French train only;
- ``source``: MEDDOCAN train only (epoch on MEDDOCAN dev), applied to French as is (zero-shot);
- ``mixed``: MEDDOCAN train + French train together (epoch on the French dev);
- ``source_then_target``: the ``source`` model, then continued training on French train
  (``train_neural(init_from=...)``: vocabularies and tags extended, the source network kept).

The network is the language-independent part of the neural tagger: characters, words, affixes, BiLSTM-CRF,
100-token windows (no rules: they are language-specific). The label schemes differ (MEDDOCAN tells patients
from doctors, EDS-Pseudo only has persons), so the scores are **category-level** strict P/R/F1 (NAME, DATE,
ID, CONTACT, LOCATION...) and binary token recall on the French held-out part, with training time and
memory. Reference rows (skipped with ``--no-references``; seconds to compute): the shipped French CRF
``fr-edspseudo-crf`` (trained on the same 80%, its settings chosen on the same 20%) alone and inside the
French default detector (rules + CRF), scored the same way. Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from run_grid import done, load_results, mean_std, run_grid, save_result  # noqa: E402

STRATEGIES = ("target", "source", "mixed", "source_then_target")
#: shipped French detectors scored on the same held-out part (computed in-process, seed 1 split only)
REFERENCES = {
    "shipped-crf": {"type": "crf", "model": "fr-edspseudo-crf"},
    "shipped-rules+crf": {
        "type": "hybrid",
        "language": "fr",
        "models": [{"type": "crf", "model": "fr-edspseudo-crf"}],
        "strategy": "model_first",
    },
}
NEURAL = {"affix": True, "epochs": 30, "patience": 4, "threads": 1}
log = logging.getLogger("cross_lingual")


def key(strategy: str, seed: int) -> str:
    return f"{strategy}__s{seed}"


def french(args: argparse.Namespace, seed: int) -> tuple[list, list, list]:
    """(train, dev, held-out) parts of EDS-Pseudo."""
    from clinideid.train.data import holdout_split, read_training_corpus

    docs = read_training_corpus(args.corpora / "eds-pseudo/train.jsonl", "jsonl", "eds_pseudo", "canonical")
    rest, held_out = holdout_split(docs, 0.2, 1)
    train, dev = holdout_split(rest, 0.1, seed)
    if args.max_docs:  # smoke tests only
        return train[: args.max_docs], dev[: args.max_docs], held_out[: args.max_docs]
    return train, dev, held_out


def spanish(args: argparse.Namespace) -> tuple[list, list]:
    from clinideid.train.data import read_training_corpus

    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    if args.max_docs:  # smoke tests only
        return train[: args.max_docs], dev[: args.max_docs]
    return train, dev


def run_one(strategy: str, seed: int, args: argparse.Namespace) -> None:
    import torch

    from clinideid.detect.neural.tagger import NeuralModel
    from clinideid.train.config import parse_train_config
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    fr_train, fr_dev, fr_held = french(args, seed)
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": 100,
            "window_overlap": 20,
            "neural": {
                **NEURAL,
                "epochs": args.source_epochs if strategy in ("source", "mixed") else args.epochs,
            },
        }
    )
    init_from = None
    if strategy in ("source", "source_then_target"):
        source_dir = args.out / "models" / f"source__s{seed}"
        if strategy == "source":
            es_train, es_dev = spanish(args)
            train, dev = es_train, es_dev
        else:
            if not (source_dir / "model.json").exists():
                raise SystemExit(f"the source model {source_dir} is missing: run the source strategy first")
            train, dev, init_from = fr_train, fr_dev, source_dir
    elif strategy == "mixed":
        train, dev = [*spanish(args)[0], *fr_train], fr_dev
    else:
        train, dev = fr_train, fr_dev
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = source_dir if strategy == "source" else Path(tmp) / "m"
        result = train_neural(
            train,
            dev,
            config,
            out_dir=model_dir,
            name=strategy,
            seed=seed,
            language="fr",
            init_from=init_from,
        )
        model = NeuralModel.load(model_dir)
        predicted = model.predict_spans(fr_held)
    save_result(
        args.out,
        key(strategy, seed),
        {
            "strategy": strategy,
            "seed": seed,
            "train_documents": len(train),
            "dev_documents": len(dev),
            "held_out_documents": len(fr_held),
            "best_epoch": result.best_epoch,
            "history": result.history,
            **score_held_out(fr_held, predicted),
            "train_seconds": result.seconds,
            "peak_memory_mb": result.peak_memory_mb,
        },
    )


def score_held_out(fr_held: list, predicted: list) -> dict[str, Any]:
    """Category-level strict P/R/F1, per-category F1 and binary token recall of ``predicted`` spans."""
    from clinideid.evaluate import evaluate

    system = [d.with_spans(s) for d, s in zip(fr_held, predicted, strict=True)]
    category = evaluate(fr_held, system, level="category", modes=["strict", "token_binary"])
    strict = category["strict"].micro
    return {
        "held_out_category_strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
        "held_out_category_f1_per_label": {
            k: round(v.f1, 4) for k, v in category["strict"].per_label().items()
        },
        "held_out_token_binary_recall": category["token_binary"].micro.recall,
    }


def run_references(args: argparse.Namespace) -> None:
    """Score the shipped French detectors on the held-out part (skipped where already saved)."""
    import time

    from clinideid.detect.base import build_detector

    _, _, fr_held = french(args, 1)
    for name, spec in REFERENCES.items():
        if done(args.out, key(name, 1)):
            continue
        detector = build_detector(spec)
        start = time.perf_counter()
        predicted = detector.detect(fr_held)
        seconds = time.perf_counter() - start
        save_result(
            args.out,
            key(name, 1),
            {"strategy": name, "seed": 1, "held_out_documents": len(fr_held), "tag_seconds": seconds,
             **score_held_out(fr_held, predicted)},
        )  # fmt: skip


def table(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> str:
    rows = [
        "| strategy | seeds | category strict P | category strict R | category strict F1 | token binary R "
        "| NAME F1 | DATE F1 | LOCATION F1 | train min | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for strategy in [*args.strategies, *REFERENCES]:
        res = [results[k] for s in args.seeds if (k := key(strategy, s)) in results]
        if not res:
            continue

        def cat(name: str, res: list = res) -> str:
            return mean_std([r["held_out_category_f1_per_label"].get(name, 0.0) for r in res])

        rows.append(
            f"| {strategy} | {','.join(str(r['seed']) for r in res)} "
            f"| {mean_std([r['held_out_category_strict']['precision'] for r in res])} "
            f"| {mean_std([r['held_out_category_strict']['recall'] for r in res])} "
            f"| {mean_std([r['held_out_category_strict']['f1'] for r in res])} "
            f"| {mean_std([r['held_out_token_binary_recall'] for r in res])} "
            f"| {cat('NAME')} | {cat('DATE')} | {cat('LOCATION')} "
            + (
                f"| {mean_std([r['train_seconds'] / 60 for r in res], 1, 1.0)} "
                f"| {mean_std([r['peak_memory_mb'] for r in res], 0, 1.0)} |"
                if strategy in STRATEGIES
                else "| – | – |"
            )
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "cross_lingual")
    ap.add_argument("--strategies", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--max-docs", type=int, default=0, help="smoke test: first N documents of every part")
    ap.add_argument(
        "--epochs", type=int, default=NEURAL["epochs"], help="epochs on French (target, continued)"
    )
    ap.add_argument("--source-epochs", type=int, default=10, help="epochs of the runs that read MEDDOCAN")
    ap.add_argument("--no-references", action="store_true", help="skip the shipped French detectors' rows")
    ap.add_argument("--run-one", nargs=2, metavar=("STRATEGY", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.run_one:
        run_one(args.run_one[0], int(args.run_one[1]), args)
        return

    def command(strategy: str, seed: int) -> list[str]:
        return [
            sys.executable, str(Path(__file__).resolve()), "--corpora", str(args.corpora), "--out", str(args.out),
            "--max-docs", str(args.max_docs), "--epochs", str(args.epochs), "--source-epochs", str(args.source_epochs),
            "--run-one", strategy, str(seed),
        ]  # fmt: skip

    failed: list[str] = []
    if not args.report_only:
        # the source models first: source_then_target continues from them
        first = [s for s in args.strategies if s != "source_then_target"]
        if "source_then_target" in args.strategies and "source" not in first:
            first.append("source")
        failed += run_grid({key(s, n): command(s, n) for s in first for n in args.seeds}, args.out, args.jobs)
        if "source_then_target" in args.strategies:
            ready = [n for n in args.seeds if done(args.out, key("source", n))]
            failed += run_grid(
                {key("source_then_target", n): command("source_then_target", n) for n in ready},
                args.out,
                args.jobs,
            )
        if not args.no_references:
            run_references(args)
    keys = [key(s, n) for s in [*STRATEGIES, *REFERENCES] for n in args.seeds]
    text = table(load_results(args.out, keys), args)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if failed:
        print(json.dumps({"failed": failed}))
        sys.exit(1)


if __name__ == "__main__":
    main()
