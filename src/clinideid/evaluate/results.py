"""Evaluation results: per-mode counts (documents x labels) and the whole report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from clinideid.errors import ConfigError
from clinideid.evaluate.confusion import ConfusionTable
from clinideid.evaluate.counts import Counts, Scores, macro_scores, micro_scores
from clinideid.evaluate.leaks import LeakReport


@dataclass(frozen=True, eq=False)
class ModeResult:
    """Counts of one evaluation mode, as an int array ``counts[document, label] = (TP, FP, FN)``."""

    mode: str
    documents: tuple[str, ...]
    labels: tuple[str, ...]
    counts: np.ndarray

    @classmethod
    def from_documents(
        cls, mode: str, per_document: Mapping[str, Mapping[str, Counts]], labels: Sequence[str]
    ) -> ModeResult:
        docs = tuple(per_document)
        labels = tuple(labels)
        index = {lab: j for j, lab in enumerate(labels)}
        arr = np.zeros((len(docs), len(labels), 3), dtype=np.int64)
        for i, doc in enumerate(docs):
            for lab, c in per_document[doc].items():
                arr[i, index[lab]] = c.as_tuple()
        return cls(mode, docs, labels, arr)

    def per_label(self) -> dict[str, Counts]:
        totals = self.counts.sum(axis=0)
        return {lab: Counts(*map(int, totals[j])) for j, lab in enumerate(self.labels)}

    def per_document(self) -> dict[str, Counts]:
        totals = self.counts.sum(axis=1)
        return {doc: Counts(*map(int, totals[i])) for i, doc in enumerate(self.documents)}

    def document(self, doc_id: str) -> dict[str, Counts]:
        return self._row(self.documents.index(doc_id))

    def _row(self, i: int) -> dict[str, Counts]:
        return {lab: Counts(*map(int, self.counts[i, j])) for j, lab in enumerate(self.labels)}

    @property
    def total(self) -> Counts:
        return Counts(*map(int, self.counts.sum(axis=(0, 1)))) if self.counts.size else Counts()

    @property
    def micro(self) -> Scores:
        return micro_scores({"all": self.total})

    @property
    def macro(self) -> Scores:
        return macro_scores(self.per_label())

    def aligned(self, labels: Sequence[str]) -> np.ndarray:
        """The counts with the label axis laid out as ``labels`` (absent labels count zero)."""
        index = {lab: j for j, lab in enumerate(self.labels)}
        out = np.zeros((len(self.documents), len(labels), 3), dtype=np.int64)
        for k, lab in enumerate(labels):
            if lab in index:
                out[:, k] = self.counts[:, index[lab]]
        return out

    def to_dict(self, per_document: bool = True) -> dict[str, object]:
        total = self.total
        out: dict[str, object] = {
            "micro": {**self.micro.to_dict(), "tp": total.tp, "fp": total.fp, "fn": total.fn},
            "macro": self.macro.to_dict(),
            "per_label": {lab: c.to_dict() for lab, c in self.per_label().items()},
        }
        if per_document:
            out["per_document"] = {
                doc: {lab: list(c.as_tuple()) for lab, c in self._row(i).items() if not c.empty}
                for i, doc in enumerate(self.documents)
            }
        return out


@dataclass
class EvaluationReport:
    """Everything ``evaluate`` measured: one ``ModeResult`` per mode, confusion, leaks, warnings."""

    options: dict[str, object]
    documents: tuple[str, ...]
    results: dict[str, ModeResult]
    confusion: ConfusionTable
    leaks: LeakReport
    warnings: list[str] = field(default_factory=list)

    def __getitem__(self, mode: str) -> ModeResult:
        try:
            return self.results[mode]
        except KeyError:
            raise ConfigError(
                f"mode {mode!r} was not evaluated; evaluated modes: {', '.join(self.results)}"
            ) from None

    @property
    def modes(self) -> list[str]:
        return list(self.results)

    def to_dict(self, per_document: bool = True) -> dict[str, object]:
        return {
            "options": self.options,
            "documents": len(self.documents),
            "modes": {m: r.to_dict(per_document) for m, r in self.results.items()},
            "confusion": self.confusion.to_dict(),
            "leaks": self.leaks.to_dict(),
            "warnings": list(self.warnings),
        }

    def format_table(self, per_document: bool = False) -> str:
        """Aligned text tables; ``per_document`` adds per-document scores and the leaked tokens' offsets."""
        from clinideid.evaluate.report import format_report

        return format_report(self, per_document=per_document)
