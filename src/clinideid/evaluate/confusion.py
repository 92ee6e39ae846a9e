"""Confusion between labels: which system label each gold span received.

Gold and system spans of a document are paired one to one by overlap regardless of label (largest overlap
first, equal labels preferred at equal overlap, see ``greedy_overlap_matches``). A pair adds one to
(gold label, system label); a gold span left unpaired adds one to (gold label, ``MISSED``) and a system span
left unpaired one to (``SPURIOUS``, system label).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from clinideid.document import Span
from clinideid.evaluate.matching import greedy_overlap_matches
from clinideid.evaluate.prepare import label_order

MISSED = "MISSED"
SPURIOUS = "SPURIOUS"


@dataclass
class ConfusionTable:
    cells: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add_document(self, gold: Sequence[Span], system: Sequence[Span]) -> None:
        pairs, missed, spurious = greedy_overlap_matches(gold, system, same_label=False)
        self.cells.update((g.label, s.label) for g, s in pairs)
        self.cells.update((g.label, MISSED) for g in missed)
        self.cells.update((SPURIOUS, s.label) for s in spurious)

    def __getitem__(self, key: tuple[str, str]) -> int:
        return self.cells.get(key, 0)

    @property
    def gold_labels(self) -> list[str]:
        """Row labels: gold labels in taxonomy order, then ``SPURIOUS`` if any."""
        rows = label_order(g for g, _ in self.cells if g != SPURIOUS)
        return rows + ([SPURIOUS] if any(g == SPURIOUS for g, _ in self.cells) else [])

    @property
    def system_labels(self) -> list[str]:
        """Column labels: system labels in taxonomy order, then ``MISSED`` if any."""
        cols = label_order(s for _, s in self.cells if s != MISSED)
        return cols + ([MISSED] if any(s == MISSED for _, s in self.cells) else [])

    def confusions(self) -> list[tuple[str, str, int]]:
        """Off-diagonal cells between real labels, most frequent first."""
        items = [
            (g, s, n)
            for (g, s), n in self.cells.items()
            if g != s and g != SPURIOUS and s != MISSED and n > 0
        ]
        return sorted(items, key=lambda x: (-x[2], x[0], x[1]))

    def rows(self) -> list[list[str | int]]:
        cols = self.system_labels
        return [[g, *(self[g, s] for s in cols)] for g in self.gold_labels]

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for g in self.gold_labels:
            row = {s: self[g, s] for s in self.system_labels if self[g, s]}
            if row:
                out[g] = row
        return out


def confusion_table(pairs: Iterable[tuple[Sequence[Span], Sequence[Span]]]) -> ConfusionTable:
    """The confusion table over (gold spans, system spans) of several documents."""
    table = ConfusionTable()
    for gold, system in pairs:
        table.add_document(gold, system)
    return table
