"""What the system let through: MEDDOCAN's leak score and a per-token leak report.

**Leak score** (MEDDOCAN subtrack 1, as its official script computes it): the number of gold entities the
system did not find under strict matching (strict FN, summed over documents) divided by the number of
sentences in the gold documents (summed over documents); 0 when there is no sentence. The official script
reads sentence counts from sentence-split files (one sentence per line); here a sentence counter is a
parameter, by default ``clinideid.text.split_sentences`` on the gold text.

**Leaked tokens**: gold PHI tokens that no system span overlaps at all (a token the system caught under a
wrong label was still removed, so it is not a leak). Each is reported by document, offsets and label; the
token's text is PHI and is only included when the caller explicitly asks for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from clinideid.document import Span, sort_spans
from clinideid.evaluate.counts import safe_div
from clinideid.evaluate.matching import TokenIndex
from clinideid.evaluate.prepare import label_order
from clinideid.text import split_sentences

SentenceCounter = Callable[[str, str], int]
"""Called with (document id, gold text); returns the document's number of sentences."""


def count_sentences(doc_id: str, text: str) -> int:
    """Sentences of ``text`` found by the package's rule-based splitter."""
    return len(split_sentences(text))


@dataclass(frozen=True)
class LeakScore:
    missed_entities: int
    sentences: int

    @property
    def score(self) -> float:
        return safe_div(self.missed_entities, self.sentences)

    def to_dict(self) -> dict[str, float | int]:
        return {"score": self.score, "missed_entities": self.missed_entities, "sentences": self.sentences}


@dataclass(frozen=True)
class LeakedToken:
    document: str
    start: int
    end: int
    label: str
    text: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "document": self.document,
            "start": self.start,
            "end": self.end,
            "label": self.label,
        }
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass
class LeakReport:
    """Gold PHI tokens the system missed, with totals per label and per document."""

    score: LeakScore
    leaked: list[LeakedToken] = field(default_factory=list)
    gold_tokens_by_label: Counter[str] = field(default_factory=Counter)
    gold_tokens_by_document: Counter[str] = field(default_factory=Counter)
    includes_text: bool = False

    @property
    def gold_tokens(self) -> int:
        return sum(self.gold_tokens_by_document.values())

    @property
    def leaked_by_label(self) -> Counter[str]:
        return Counter(t.label for t in self.leaked)

    @property
    def leaked_by_document(self) -> Counter[str]:
        return Counter(t.document for t in self.leaked)

    @property
    def token_leak_rate(self) -> float:
        """Share of gold PHI tokens that no system span covers."""
        return safe_div(len(self.leaked), self.gold_tokens)

    def to_dict(self) -> dict[str, object]:
        by_label = self.leaked_by_label
        by_doc = self.leaked_by_document
        return {
            "leak_score": self.score.to_dict(),
            "gold_phi_tokens": self.gold_tokens,
            "leaked_tokens": len(self.leaked),
            "token_leak_rate": self.token_leak_rate,
            "includes_text": self.includes_text,
            "per_label": {
                lab: {"leaked": by_label.get(lab, 0), "gold": self.gold_tokens_by_label[lab]}
                for lab in label_order(self.gold_tokens_by_label)
            },
            "per_document": {
                doc: {"leaked": by_doc.get(doc, 0), "gold": n}
                for doc, n in self.gold_tokens_by_document.items()
            },
            "tokens": [t.to_dict() for t in self.leaked],
        }


def leaked_tokens(
    doc_id: str,
    text: str,
    gold: Sequence[Span],
    system: Sequence[Span],
    tokens: TokenIndex,
    *,
    include_text: bool = False,
) -> tuple[list[LeakedToken], Mapping[int, str]]:
    """(leaked tokens, {gold PHI token index: label}) for one document.

    A token under several gold spans takes the label of the first of them in reading order.
    """
    gold_label: dict[int, str] = {}
    for s in sort_spans(gold):
        for a, b in s.pieces:
            for i in tokens.overlapping(a, b):
                gold_label.setdefault(i, s.label)
    covered: set[int] = set()
    for s in system:
        for a, b in s.pieces:
            covered.update(tokens.overlapping(a, b))
    out = []
    for i in sorted(gold_label):
        if i in covered:
            continue
        tok = tokens.tokens[i]
        out.append(
            LeakedToken(
                doc_id, tok.start, tok.end, gold_label[i], text[tok.start : tok.end] if include_text else None
            )
        )
    return out, gold_label
