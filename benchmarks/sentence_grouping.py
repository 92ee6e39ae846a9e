"""How many sentences the neural tagger should read at once: ``windows: sentences`` sweep on MEDDOCAN.

    python benchmarks/sentence_grouping.py [--groups 1 2 4 8 16 32] [--seeds 1] [--train-docs 120]
        [--epochs 8] [--jobs 2] [--out runs/sentence_grouping] [--markdown FILE]

Each setting trains the tagger (characters, words, affixes, BiLSTM-CRF; the ``cross_lingual`` network) on
the first ``--train-docs`` documents of MEDDOCAN train, selects the epoch on the next ``--select-docs``
train documents (so MEDDOCAN dev is never used for selection), and is scored once on the whole MEDDOCAN
dev (250 documents, canonical labels): strict P/R/F1 and binary token recall, training seconds, and
inference speed (tokens per second of wall time for ``predict_spans`` over dev, tokenization included,
one torch thread). Settings: ``sliding`` (the default: 200-token windows, 20 overlap) and ``sentences``
with ``sentences_per_window`` = each of ``--groups``; sentence windows are capped at ``--max-window``
tokens (a longer group is cut into sliding pieces), so the cap rarely binds. The mean window length in
tokens is reported for each setting. Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from cross_lingual import NEURAL  # noqa: E402
from run_grid import load_results, mean_std, run_grid, save_result  # noqa: E402

SLIDING = "sliding"
log = logging.getLogger("sentence_grouping")


def setting_name(group: int | None) -> str:
    return SLIDING if group is None else f"sentences{group}"


def key(setting: str, seed: int) -> str:
    return f"{setting}__s{seed}"


def window_settings(setting: str, max_window: int) -> dict[str, Any]:
    """Training-config keys of a setting: ``sliding`` or ``sentences<N>``."""
    if setting == SLIDING:
        return {"window_size": 200, "window_overlap": 20, "neural": {"windows": "sliding"}}
    if not setting.startswith("sentences") or not setting[len("sentences") :].isdigit():
        raise ValueError(f"unknown setting {setting!r}: sliding or sentences<N>")
    group = int(setting[len("sentences") :])
    return {
        "window_size": max_window,
        "window_overlap": 0,
        "neural": {"windows": "sentences", "sentences_per_window": group},
    }


def window_lengths(windows_per_doc: Sequence[Sequence[Any]]) -> dict[str, float]:
    """Mean and largest window length (tokens) and mean windows per document."""
    lengths = [w.end - w.start for wins in windows_per_doc for w in wins]
    if not lengths:
        return {"mean_window_tokens": 0.0, "max_window_tokens": 0, "windows_per_document": 0.0}
    return {
        "mean_window_tokens": round(statistics.fmean(lengths), 1),
        "max_window_tokens": max(lengths),
        "windows_per_document": round(len(lengths) / len(windows_per_doc), 2),
    }


def run_one(setting: str, seed: int, args: argparse.Namespace) -> None:
    import torch

    from clinideid.detect.neural.tagger import NeuralModel
    from clinideid.evaluate import evaluate
    from clinideid.train.config import parse_train_config
    from clinideid.train.data import read_training_corpus
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    windows = window_settings(setting, args.max_window)
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": windows["window_size"],
            "window_overlap": windows["window_overlap"],
            "neural": {**NEURAL, "epochs": args.epochs, "patience": 3, **windows["neural"]},
        }
    )
    train_all = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    train = train_all[: args.train_docs]
    select = train_all[args.train_docs : args.train_docs + args.select_docs]
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    with tempfile.TemporaryDirectory() as tmp:
        result = train_neural(
            train, select, config, out_dir=Path(tmp) / "m", name=setting, seed=seed, language="es"
        )
        model = NeuralModel.load(Path(tmp) / "m", threads=1)
        model.predict_spans(dev[:2])  # warm-up
        start = time.perf_counter()
        predicted = model.predict_spans(dev)
        tag_seconds = time.perf_counter() - start
        prepared = model.prepare(dev)
        stats = window_lengths([model.windows(d.text, t) for d, t in zip(dev, prepared.tokens, strict=True)])
        tokens = sum(len(t) for t in prepared.tokens)
    system = [d.with_spans(s) for d, s in zip(dev, predicted, strict=True)]
    report = evaluate(dev, system, modes=["strict", "token_binary"])
    strict = report["strict"].micro
    save_result(
        args.out,
        key(setting, seed),
        {
            "setting": setting,
            "seed": seed,
            "train_documents": len(train),
            "select_documents": len(select),
            "dev_documents": len(dev),
            "best_epoch": result.best_epoch,
            "history": result.history,
            "strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
            "token_binary_recall": report["token_binary"].micro.recall,
            "train_seconds": result.seconds,
            "dev_tokens": tokens,
            "tag_seconds": tag_seconds,
            "tokens_per_second": tokens / tag_seconds,
            **stats,
        },
    )


def table(results: dict[str, dict[str, Any]], settings: Sequence[str], seeds: Sequence[int]) -> str:
    rows = [
        "| windows | seeds | mean window tokens | strict P | strict R | strict F1 | token binary R | best epoch "
        "| train s | tag tokens/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for setting in settings:
        res = [results[k] for s in seeds if (k := key(setting, s)) in results]
        if not res:
            continue
        label = (
            "sliding 200/20 (default)" if setting == SLIDING else f"{setting[len('sentences') :]} sentences"
        )
        rows.append(
            f"| {label} | {','.join(str(r['seed']) for r in res)} "
            f"| {statistics.fmean(r['mean_window_tokens'] for r in res):.0f} "
            f"| {mean_std([r['strict']['precision'] for r in res])} | {mean_std([r['strict']['recall'] for r in res])} "
            f"| {mean_std([r['strict']['f1'] for r in res])} | {mean_std([r['token_binary_recall'] for r in res])} "
            f"| {','.join(str(r['best_epoch']) for r in res)} | {mean_std([r['train_seconds'] for r in res], 0, 1.0)} "
            f"| {mean_std([r['tokens_per_second'] for r in res], 0, 1.0)} |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "sentence_grouping")
    ap.add_argument("--groups", nargs="+", type=int, default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--no-sliding", action="store_true", help="skip the sliding-window reference")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument("--train-docs", type=int, default=120)
    ap.add_argument("--select-docs", type=int, default=25)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--max-window", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--run-one", nargs=2, metavar=("SETTING", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.run_one:
        run_one(args.run_one[0], int(args.run_one[1]), args)
        return
    settings = ([] if args.no_sliding else [SLIDING]) + [setting_name(g) for g in args.groups]

    def command(setting: str, seed: int) -> list[str]:
        return [
            sys.executable, str(Path(__file__).resolve()), "--corpora", str(args.corpora), "--out", str(args.out),
            "--train-docs", str(args.train_docs), "--select-docs", str(args.select_docs),
            "--epochs", str(args.epochs), "--max-window", str(args.max_window), "--run-one", setting, str(seed),
        ]  # fmt: skip

    failed: list[str] = []
    if not args.report_only:
        # seed-major order: a first seed of every setting finishes before any second seed starts
        failed = run_grid(
            {key(st, s): command(st, s) for s in args.seeds for st in settings}, args.out, args.jobs
        )
    text = table(
        load_results(args.out, [key(st, s) for st in settings for s in args.seeds]), settings, args.seeds
    )
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if failed:
        print(json.dumps({"failed": failed}))
        sys.exit(1)


if __name__ == "__main__":
    main()
