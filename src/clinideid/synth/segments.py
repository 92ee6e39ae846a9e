"""A note as a list of segments: literal text, PHI values (with their label) and distractors.

Keeping the note in pieces until the end is what makes the style transformations offset-safe: a style
rewrites each piece on its own, and the gold spans are computed only when the pieces are joined, so a span
always covers exactly the text of its value, however much the text around it changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from clinideid.document import Document, Span

#: segment kinds
LITERAL = "literal"
PHI = "phi"
DISTRACTOR = "distractor"


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of a note. ``label`` is the canonical PHI label of a ``phi`` segment, else ``None``;
    ``tag`` names what a distractor is (``eponym``, ``vitals``...)."""

    text: str
    kind: str = LITERAL
    label: str | None = None
    tag: str | None = None

    def with_text(self, text: str) -> Segment:
        return Segment(text, self.kind, self.label, self.tag)


@dataclass(frozen=True, slots=True)
class SynthNote:
    """A generated note: the document with its gold spans, plus where the distractors are (never PHI)."""

    document: Document
    distractors: tuple[tuple[int, int, str], ...]


def assemble(segments: list[Segment], doc_id: str, language: str, metadata: dict[str, object]) -> SynthNote:
    """Join ``segments`` into a document; every ``phi`` segment becomes one gold span."""
    parts: list[str] = []
    spans: list[Span] = []
    distractors: list[tuple[int, int, str]] = []
    pos = 0
    for seg in segments:
        if not seg.text:
            continue
        end = pos + len(seg.text)
        if seg.kind == PHI and seg.label:
            spans.append(Span(pos, end, seg.label, text=seg.text, source="gold"))
        elif seg.kind == DISTRACTOR:
            distractors.append((pos, end, seg.tag or "distractor"))
        parts.append(seg.text)
        pos = end
    doc = Document(doc_id, "".join(parts), language, metadata, tuple(spans))
    return SynthNote(doc, tuple(distractors))
