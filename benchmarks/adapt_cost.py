"""What ``clinideid adapt`` costs (wall time, peak memory) and how fast the default pipelines detect.

- adapt: for each ``--sizes`` N, N synthetic notes' text (labels dropped; seed 1001) stands in for a site's
  notes, written as a JSONL file; ``clinideid adapt`` runs on it in a child process (``--model crf`` by
  default, ``--synthetic`` annotated notes added, ``--time-budget`` minutes when given), and the child's
  wall time, peak RSS (``wait4``) and per-step seconds (``adapt.json``) are recorded;
- inference: each language's default pipeline (``Deidentifier.for_language``, detection only) over the
  challenge notes' text, best of ``--repeat`` passes, characters per CPU second (one thread).

    nice -n 10 .venv/bin/python benchmarks/adapt_cost.py --sizes 1000 10000 --time-budget 5 --json cost.json
    nice -n 10 .venv/bin/python benchmarks/adapt_cost.py --sizes 0 --inference     # inference only

No note text is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge"
RUN_CLI = "import sys; from clinideid.cli import main; sys.exit(main(sys.argv[1:]))"


def adapt_cost(size: int, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from clinideid.synth import generate

    notes = tmp / f"site-{size}.jsonl"
    chars = 0
    with notes.open("w", encoding="utf-8") as fh:
        for k, doc in enumerate(generate(args.language, size, seed=1001)):
            fh.write(json.dumps({"id": f"n{k}", "text": doc.text}, ensure_ascii=False) + "\n")
            chars += len(doc.text)
    out = tmp / f"out-{size}"
    cmd = [sys.executable, "-c", RUN_CLI, "adapt", str(notes), "-l", args.language, "-o", str(out)]
    cmd += ["--synthetic", str(args.synthetic), "--model", args.model]
    if args.time_budget is not None:
        cmd += ["--time-budget", str(args.time_budget)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()  # progress lines (no note text); drained so the child never blocks
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise SystemExit(f"adapt failed on {size} notes (exit {proc.returncode}): {tail}")
    report = json.loads((out / "adapt.json").read_text("utf-8"))
    return {
        "site_notes": size,
        "site_characters": chars,
        "synthetic": args.synthetic,
        "model": args.model,
        "time_budget_minutes": args.time_budget,
        "wall_seconds": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        "step_seconds": report["step_seconds"],
        "grid_points_trained": report["training"].get("grid_points_trained"),
        "within_budget": report["training"].get("within_budget"),
        "held_back_strict_f1": report["training"].get("held_back_strict_f1"),
    }


def inference_speed(languages: list[str], corpus_dir: Path, repeat: int) -> dict[str, Any]:
    import hashlib

    from clinideid.document import Document
    from clinideid.formats import read_corpus
    from clinideid.pipeline import Deidentifier

    out = {}
    for language in languages:
        docs = [
            Document(d.id, d.text, language) for d in read_corpus(corpus_dir / f"{language}.jsonl", "jsonl")
        ]
        deid = Deidentifier.for_language(language, hashlib.sha256(b"benchmark").digest())
        deid.detect(Document("warm-up", "Warm-up text 12/03/2020, Dr. Warm.", language))
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            for doc in docs:
                deid.detect(doc)
            best = min(best, time.process_time() - t0)
        chars = sum(len(d.text) for d in docs)
        out[language] = {
            "characters": chars,
            "cpu_seconds": round(best, 3),
            "chars_per_cpu_second": round(chars / best),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--language", default="en", help="language of the stand-in site notes")
    ap.add_argument(
        "--sizes", nargs="+", type=int, default=[1000, 10000], help="site notes (0: no adapt run)"
    )
    ap.add_argument("--synthetic", type=int, default=1000)
    ap.add_argument("--model", default="crf", choices=["crf", "neural"])
    ap.add_argument("--time-budget", type=float, default=None, help="adapt --time-budget (minutes)")
    ap.add_argument("--inference", action="store_true", help="also time the default pipelines (en de it ru)")
    ap.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS_DIR)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the child inherits it
    result: dict[str, Any] = {"adapt": [], "inference": None}

    def save() -> None:
        if args.json:
            args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    with tempfile.TemporaryDirectory(prefix="adapt-cost-") as tmp:
        for size in [s for s in args.sizes if s > 0]:
            result["adapt"].append(adapt_cost(size, args, Path(tmp)))
            print(json.dumps(result["adapt"][-1]), file=sys.stderr)
            save()
    if args.inference:
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass
        result["inference"] = inference_speed(["en", "de", "it", "ru"], args.corpus_dir, args.repeat)
        save()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
