"""Peak memory of de-identifying one large document, each size in a fresh process.

Usage (from the repository root)::

    PYTHONPATH=src .venv/bin/python benchmarks/memory_single_document.py                  # en rules 1, 10 MB
    PYTHONPATH=src .venv/bin/python benchmarks/memory_single_document.py --sizes 1 10 100
    PYTHONPATH=src .venv/bin/python benchmarks/memory_single_document.py --language es --pipeline default
    PYTHONPATH=src .venv/bin/python benchmarks/memory_single_document.py --tracemalloc --sizes 1

English documents are generated discharge summaries joined into one text (``synthetic_notes.py``: every
note has its own names, dates and numbers; ASCII, one byte per character); Spanish ones are MEDDOCAN dev
joined and repeated up to the size (read from ``--corpora`` at run time). ``--pipeline rules`` keeps only
``{type: rules, language: xx}``; ``default`` is ``Deidentifier.for_language``; both with the language's
default operators and a random key.

Each child process builds the pipeline, warms it up, builds the document, then resets the kernel's peak
RSS mark (``/proc/self/clear_refs``) so that the peak covers ``deidentify`` alone, with the pipeline and
the input document already resident. Reported: RSS when the pipeline is ready, RSS with the document
built, peak RSS during ``deidentify``, peak / document size, and (peak - RSS before) / document size,
i.e. the extra memory de-identification needed per byte of input. ``--tracemalloc`` instead traces
Python allocations during ``deidentify`` and prints the source lines holding the most memory at (close
to) the traced peak. No document text is printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic_notes import long_text  # noqa: E402

DEFAULT_CORPORA = HERE.parent.parent / "shared" / "corpora"
MB = 1_000_000


def proc_status(field: str) -> float:
    """A ``/proc/self/status`` memory field (VmRSS, VmHWM) in MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024 / MB
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak() -> bool:
    """Reset the kernel's peak RSS mark (VmHWM) to the current RSS; False where that is not allowed."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def make_document(language: str, size: int, corpora: Path) -> str:
    if language == "en":
        return long_text(size, seed=3)
    from clinideid.formats import read_corpus

    docs = read_corpus(corpora / "meddocan" / "dev", "brat")
    joined = "\n\n".join(d.text for d in docs)
    return ("\n\n".join([joined] * max(1, -(-size // len(joined)))))[:size]


class PeakSnapshot:
    """Keeps a tracemalloc snapshot taken when traced memory reached a new high, checked whenever a
    clinideid function returns (its frame, and the temporaries it holds, still alive)."""

    def __init__(self) -> None:
        self.snapshot: tracemalloc.Snapshot | None = None
        self.at = 0

    def __call__(self, frame, event, arg) -> None:
        if event != "return" or "clinideid" not in frame.f_code.co_filename:
            return
        current, _ = tracemalloc.get_traced_memory()
        if current > self.at * 1.1 + MB:
            sys.setprofile(None)
            self.snapshot = tracemalloc.take_snapshot()
            self.at = current
            sys.setprofile(self)


def child(args: argparse.Namespace) -> dict:
    from clinideid.document import Document
    from clinideid_driver import WARM_UP, build

    deid = build(args.language, args.pipeline)
    deid.deidentify(Document("warm-up", WARM_UP[args.language], args.language))
    rss_ready = proc_status("VmRSS")
    text = make_document(args.language, int(args.mb * MB), args.corpora)
    doc = Document("large", text, args.language)
    gc.collect()
    rss_doc = proc_status("VmRSS")
    out = {
        "language": args.language,
        "pipeline": args.pipeline,
        "mb": args.mb,
        "chars": len(text),
        "utf8_mb": len(text.encode("utf-8")) / MB,
        "str_mb": sys.getsizeof(text) / MB,
        "rss_ready_mb": rss_ready,
        "rss_with_document_mb": rss_doc,
    }
    if args.tracemalloc:
        tracemalloc.start(args.frames)
        watcher = PeakSnapshot()
        sys.setprofile(watcher)
        result = deid.deidentify(doc)
        sys.setprofile(None)
        _, traced_peak = tracemalloc.get_traced_memory()
        out.update(traced_peak_mb=traced_peak / MB, snapshot_at_mb=watcher.at / MB, spans=len(result.spans))
        if watcher.snapshot is not None:
            stats = watcher.snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
            out["top_lines"] = [
                {"where": str(s.traceback), "mb": s.size / MB, "blocks": s.count}
                for s in stats.statistics("lineno")[: args.top]
            ]
            out["top_tracebacks"] = [
                {"where": s.traceback.format()[-2 * args.frames :], "mb": s.size / MB, "blocks": s.count}
                for s in stats.statistics("traceback")[: min(args.top, 8)]
            ]
        return out
    reset = reset_peak()
    cpu0 = time.process_time()
    result = deid.deidentify(doc)
    cpu = time.process_time() - cpu0
    peak = proc_status("VmHWM") if reset else float("nan")
    size_mb = out["utf8_mb"]
    out.update(
        peak_mb=peak,
        rss_after_mb=proc_status("VmRSS"),
        cpu_s=cpu,
        spans=len(result.spans),
        replacements=len(result.replacements),
        peak_per_doc=peak / size_mb,
        extra_per_doc=(peak - rss_doc) / size_mb,
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--language", choices=["en", "es"], default="en")
    ap.add_argument("--pipeline", choices=["rules", "default"], default="rules")
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 10], help="document sizes in MB")
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--tracemalloc", action="store_true", help="trace allocations instead of measuring RSS")
    ap.add_argument("--frames", type=int, default=4, help="traceback depth kept by --tracemalloc")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed to one size")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mb", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        json.dump(child(args), sys.stdout)
        return 0
    rows = []
    for size in args.sizes:
        command = [sys.executable, __file__, "--child", "--mb", str(size), "--language", args.language]
        command += ["--pipeline", args.pipeline, "--corpora", str(args.corpora), "--top", str(args.top)]
        command += ["--frames", str(args.frames)] + (["--tracemalloc"] if args.tracemalloc else [])
        print(f"{args.language} {args.pipeline} {size:g} MB ...", file=sys.stderr, flush=True)
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout, check=False, env=os.environ.copy()
        )
        if proc.returncode != 0:
            print("\n".join(proc.stderr.strip().splitlines()[-5:]), file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout))
    if args.tracemalloc:
        for row in rows:
            print(
                f"## {row['language']} {row['pipeline']} {row['mb']:g} MB: traced peak "
                f"{row['traced_peak_mb']:.1f} MB, snapshot at {row['snapshot_at_mb']:.1f} MB"
            )
            for stat in row.get("top_lines", []):
                print(f"{stat['mb']:9.1f} MB {stat['blocks']:>9,} blocks  {stat['where']}")
            for stat in row.get("top_tracebacks", []):
                print(f"--- {stat['mb']:.1f} MB in {stat['blocks']:,} blocks")
                print("\n".join(stat["where"]))
    else:
        print(
            "| lang | pipeline | document MB | RSS ready MB | RSS with document MB | peak RSS MB | "
            "peak / document | (peak - before) / document | CPU s | spans |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['language']} | {r['pipeline']} | {r['utf8_mb']:.1f} | {r['rss_ready_mb']:.0f} | "
                f"{r['rss_with_document_mb']:.0f} | {r['peak_mb']:.0f} | {r['peak_per_doc']:.1f} | "
                f"{r['extra_per_doc']:.1f} | {r['cpu_s']:.1f} | {r['spans']:,} |"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
