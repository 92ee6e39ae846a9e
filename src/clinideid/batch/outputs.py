"""Writing de-identified outputs: texts in the input's layout, annotations (BRAT or JSONL), a summary."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinideid.pipeline import DeidResult


@dataclass
class RunSummary:
    """Counts for a batch run; errors are listed by document id with a message that holds no text."""

    documents: int = 0
    succeeded: int = 0
    skipped: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    per_label: Counter = field(default_factory=Counter)
    per_source: Counter = field(default_factory=Counter)
    per_operator: Counter = field(default_factory=Counter)
    fallbacks: Counter = field(default_factory=Counter)
    characters: int = 0
    seconds: float = 0.0

    def add(self, result: DeidResult, n_chars: int) -> None:
        self.succeeded += 1
        self.characters += n_chars
        for r in result.replacements:
            self.per_label[r.label] += 1
            self.per_source[r.source] += 1
            self.per_operator[r.operator] += 1
            if r.note:
                self.fallbacks[r.note] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "succeeded": self.succeeded,
            "failed": len(self.errors),
            "skipped": self.skipped,
            "spans_per_label": dict(sorted(self.per_label.items())),
            "spans_per_detector": dict(sorted(self.per_source.items())),
            "spans_per_operator": dict(sorted(self.per_operator.items())),
            "operator_fallbacks": dict(sorted(self.fallbacks.items())),
            "characters": self.characters,
            "seconds": round(self.seconds, 3),
            "characters_per_second": round(self.characters / self.seconds) if self.seconds else None,
            "errors": self.errors,
            "warnings": self.warnings,
        }


class OutputWriter:
    """Writes each result as it comes (bounded memory) under ``out_dir``."""

    def __init__(
        self, out_dir: Path, annotations: str = "jsonl", jsonl_name: str | None = None, append: bool = False
    ) -> None:
        self.out_dir = out_dir
        self.annotations = annotations
        out_dir.mkdir(parents=True, exist_ok=True)
        self._jsonl = (out_dir / jsonl_name).open("w", encoding="utf-8") if jsonl_name else None
        # a resumed run adds to the report of the run it continues
        self._reports = (out_dir / "report.jsonl").open("a" if append else "w", encoding="utf-8")

    def text_path(self, relpath: str) -> Path:
        return self.out_dir / relpath

    def write(self, result: DeidResult, relpath: str, record: dict | None = None) -> None:
        if record is not None and self._jsonl is not None:
            out = {k: v for k, v in record.items() if k != "_text_field"}
            out[record["_text_field"]] = result.text
            for stale in ("entities", "spans"):  # gold annotations would point at original text
                out.pop(stale, None)
            self._jsonl.write(json.dumps(out, ensure_ascii=False) + "\n")
        else:
            path = self.text_path(relpath)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8", newline="") as fh:
                fh.write(result.text)
            if self.annotations == "brat":
                self._write_brat(result, path.with_suffix(".ann"))
        self._reports.write(json.dumps(result.report(), ensure_ascii=False) + "\n")

    @staticmethod
    def _write_brat(result: DeidResult, path: Path) -> None:
        """Annotations of the *output* text: where each replacement now stands."""
        lines = []
        for i, r in enumerate(result.replacements, start=1):
            if r.new_end > r.new_start:
                frag = result.text[r.new_start : r.new_end].replace("\n", " ")
                lines.append(f"T{i}\t{r.label} {r.new_start} {r.new_end}\t{frag}")
        path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")

    def close(self, summary: RunSummary) -> None:
        if self._jsonl is not None:
            self._jsonl.close()
        self._reports.close()
        (self.out_dir / "summary.json").write_text(
            json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
