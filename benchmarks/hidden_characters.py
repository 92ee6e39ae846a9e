"""Recall when names are split by invisible characters, against the same notes without them.

Usage (from the repository root)::

    .venv/bin/python benchmarks/hidden_characters.py                       # challenge notes, en de it ru
    .venv/bin/python benchmarks/hidden_characters.py --corpus-dir ../shared/corpora/notes --languages en es

For each note of ``<corpus-dir>/<lang>.jsonl`` (gold spans in canonical labels), a copy is made in which
every word of four or more letters inside a gold name span (PATIENT, DOCTOR, PERSON) gets an invisible
character in its middle, taking in turn a zero-width space, a word joiner, a soft hyphen, a zero-width
joiner and a right-to-left mark; the gold offsets are moved with the text. The default pipeline of the
language (``Deidentifier.for_language``, detection only) runs over both versions, and the script prints
token-level binary recall on the name spans and precision over all spans (``evaluate(..., level="binary")``,
mode ``token_binary``), plus how many gold name spans have a letter left outside every detected span
(a fragment that would survive de-identification). No text is printed.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import sys
from pathlib import Path

import regex

from clinideid.document import Document, Span
from clinideid.evaluate import evaluate
from clinideid.formats import ReadReport, read_corpus
from clinideid.pipeline import Deidentifier

DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge"
NAME_LABELS = frozenset({"PATIENT", "DOCTOR", "PERSON"})
HIDDEN = ("\u200b", "\u2060", "\u00ad", "\u200d", "\u200f")
TEST_KEY = hashlib.sha256(b"benchmark").digest()
_LONG_WORD = regex.compile(r"\p{L}{4,}")


def hide(doc: Document) -> Document:
    """``doc`` with an invisible character in the middle of every long word of its name spans."""
    inserts: list[int] = []
    for span in doc.spans:
        if span.label in NAME_LABELS:
            for m in _LONG_WORD.finditer(doc.text, span.start, span.end):
                inserts.append((m.start() + m.end()) // 2)
    inserts.sort()
    parts, cursor = [], 0
    for k, pos in enumerate(inserts):
        parts.extend((doc.text[cursor:pos], HIDDEN[k % len(HIDDEN)]))
        cursor = pos
    parts.append(doc.text[cursor:])

    def moved(pos: int) -> int:  # every insertion lies strictly inside a word, never at a span's edge
        return pos + bisect.bisect_left(inserts, pos)

    spans = [Span(moved(s.start), moved(s.end), s.label) for s in doc.spans if not s.fragments]
    return Document(doc.id, "".join(parts), doc.language, doc.metadata, tuple(spans))


def score(deid: Deidentifier, gold: list[Document]) -> dict[str, float | int]:
    system = [d.with_spans(deid.detect(Document(d.id, d.text, d.language))[0]) for d in gold]
    names = [d.with_spans(s for s in d.spans if s.label in NAME_LABELS) for d in gold]
    everything = evaluate(gold, system, level="binary", modes=["token_binary"]).results["token_binary"].total
    on_names = evaluate(names, system, level="binary", modes=["token_binary"]).results["token_binary"].total
    partial = 0
    for doc, found in zip(names, system, strict=True):
        for span in doc.spans:
            letters = [i for i in range(span.start, span.end) if doc.text[i].isalpha()]
            if any(not any(x.start <= i < x.end for x in found.spans) for i in letters):
                partial += 1
    return {
        "precision": round(everything.precision, 4),
        "name_recall": round(on_names.recall, 4),
        "names": sum(len(d.spans) for d in names),
        "names_with_a_letter_left": partial,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS_DIR)
    ap.add_argument("--languages", nargs="+", default=["en", "de", "it", "ru"])
    args = ap.parse_args(argv)
    print(
        f"{'lang':5} {'version':7} {'names':>6} {'name R':>7} {'P (all)':>8} {'names with a letter left':>25}"
    )
    for language in args.languages:
        path = args.corpus_dir / f"{language}.jsonl"
        if not path.exists():
            print(f"{language}: no {path}", file=sys.stderr)
            continue
        gold = [d for d in read_corpus(path, "jsonl", report=ReadReport()) if d.language in (None, language)]
        deid = Deidentifier.for_language(language, TEST_KEY)
        for version, docs in (("clean", gold), ("hidden", [hide(d) for d in gold])):
            r = score(deid, docs)
            print(
                f"{language:5} {version:7} {r['names']:>6} {r['name_recall']:>7.3f} {r['precision']:>8.3f} "
                f"{r['names_with_a_letter_left']:>25}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
