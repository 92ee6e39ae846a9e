"""Round-trip MEDDOCAN through the codecs: BRAT -> JSONL -> i2b2 XML -> BRAT, and count differences.

Usage::

    python benchmarks/roundtrip_meddocan.py [PATH]   # PATH defaults to ../shared/corpora/meddocan

PATH is the MEDDOCAN folder (its ``train`` and ``dev`` sub-folders are read) or one split's folder.
Everything is written to a temporary folder that is removed afterwards. Prints the number of
documents and spans, the span differences after the chain (must be 0: the exit status is 1 otherwise)
and the time of each step. Only counts and offsets are printed, never text.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from clinideid.document import Document
from clinideid.formats import ReadReport, read_corpus, write_corpus

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "meddocan"


def span_keys(docs: list[Document]) -> set[tuple[str, int, int, str]]:
    return {(d.id, *s.key()) for d in docs for s in d.spans}


def timed(label: str, timings: dict[str, float], fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = fn()
    timings[label] = time.perf_counter() - start
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT, help="MEDDOCAN folder")
    args = parser.parse_args(argv)
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a folder")
    splits = [p for p in (args.path / "train", args.path / "dev") if p.is_dir()] or [args.path]

    timings: dict[str, float] = {}
    report = ReadReport()
    total_start = time.perf_counter()

    def read_source() -> list[Document]:
        docs: list[Document] = []
        for split in splits:
            # ids name the split (train/NAME) so that both splits live in one corpus
            docs += [replace(d, id=f"{split.name}/{d.id}") for d in read_corpus(split, "brat", report=report)]
        return docs

    source = timed("read brat", timings, read_source)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        timed("write jsonl", timings, lambda: write_corpus(source, work / "corpus.jsonl", "jsonl"))
        via_jsonl = timed(
            "read jsonl", timings, lambda: read_corpus(work / "corpus.jsonl", "jsonl", report=ReadReport())
        )
        timed("write i2b2", timings, lambda: write_corpus(via_jsonl, work / "xml", "i2b2", root="MEDDOCAN"))
        via_xml = timed(
            "read i2b2",
            timings,
            lambda: read_corpus(work / "xml", "i2b2", recursive=True, report=ReadReport()),
        )
        timed("write brat", timings, lambda: write_corpus(via_xml, work / "brat", "brat"))
        back = timed(
            "read brat again",
            timings,
            lambda: read_corpus(work / "brat", "brat", recursive=True, report=ReadReport()),
        )
    total = time.perf_counter() - total_start

    before, after = span_keys(source), span_keys(back)
    span_diffs = len(before ^ after)
    by_id = {d.id: d for d in back}
    doc_diffs = sum(1 for d in source if d.id not in by_id or by_id[d.id].text != d.text)
    doc_diffs += len(set(by_id) - {d.id for d in source})
    identical = sum(1 for d in source if by_id.get(d.id) == d)

    print(f"corpus:            {args.path} ({', '.join(s.name for s in splits)})")
    print(f"documents:         {len(source)}")
    print(f"spans:             {len(before)}")
    print(f"reading warnings:  {len(report.warnings)} (edge punctuation / words cut by a span; not changed)")
    print(f"span differences:  {span_diffs}")
    print(f"text/id differences: {doc_diffs}")
    print(f"documents identical in every field: {identical}/{len(source)}")
    for label, seconds in timings.items():
        print(f"  {label:<16} {seconds:7.2f} s")
    print(f"total:             {total:.2f} s")
    return 0 if span_diffs == 0 and doc_diffs == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
