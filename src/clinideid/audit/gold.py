"""The audit checked against gold: of the PHI a system missed, how much would the audit have flagged?

The system's spans are replaced by tags (the text a run would leave around them is the same), the audit
scans the result with the tags excluded, and every gold span no system span touches (a true leak) is
looked up among the flags at its place in the output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from clinideid.audit.residual import scan
from clinideid.document import Document
from clinideid.resolve import resolve_spans
from clinideid.transform.apply import apply_operators
from clinideid.transform.base import build_operator


def audit_against_gold(
    gold: Sequence[Document], system: Sequence[Document], top_score: float = 0.5
) -> dict[str, Any]:
    """Counts only: true leaks, how many any flag / a top-ranked flag covers, flags per 1,000 characters."""
    tag = build_operator("tag")
    by_id = {d.id: d for d in system}
    c: Counter[str] = Counter()
    per_label: Counter[str] = Counter()
    for doc in gold:
        predicted = by_id.get(doc.id)
        spans = list(predicted.spans) if predicted is not None else []
        kept = resolve_spans(spans, "longest").kept
        source = Document(doc.id, doc.text, doc.language or "en")
        text, reps = apply_operators(source, kept, lambda label: tag)
        flags = scan(text, source.language, [(r.new_start, r.new_end) for r in reps])
        c["chars"] += len(doc.text)
        c["flags"] += len(flags)
        for g in doc.spans:
            if any(s.start < g.end and g.start < s.end for s in kept):
                continue
            start = g.start + sum(
                (r.new_end - r.new_start) - (r.end - r.start) for r in reps if r.end <= g.start
            )
            end = start + (g.end - g.start)
            c["leaks"] += 1
            hits = [f for f in flags if f.start < end and start < f.end]
            if hits:
                c["flagged"] += 1
                if max(f.score for f in hits) >= top_score:
                    c["flagged_top"] += 1
            else:
                per_label[g.label] += 1
    return {
        "true_leaks": c["leaks"],
        "leaks_flagged": c["flagged"],
        "leaks_flagged_top": c["flagged_top"],
        "share_flagged": round(c["flagged"] / c["leaks"], 4) if c["leaks"] else None,
        "top_score": top_score,
        "unflagged_leaks_per_label": dict(sorted(per_label.items())),
        "flags_per_1k_chars": round(1000 * c["flags"] / c["chars"], 2) if c["chars"] else None,
    }
