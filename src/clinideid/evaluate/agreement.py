"""Inter-annotator agreement between reviewers: observed agreement and Krippendorff's alpha over tokens,
pairwise entity F1.

Input: ``{reviewer: {document id: [(start, end, label), ...]}}`` and the documents' texts. Every token of a
document a reviewer annotated gets that reviewer's label (the label of a span covering it, ``O`` otherwise);
documents a reviewer did not annotate are missing values for alpha, as Krippendorff's coefficient allows.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

_TOKEN = re.compile(r"\w+|[^\w\s]")

Annotations = Mapping[str, Mapping[str, Sequence[tuple[int, int, str]]]]


def token_labels(text: str, spans: Sequence[tuple[int, int, str]]) -> list[str]:
    """One label per token of ``text`` (``O`` outside every span)."""
    out = []
    for m in _TOKEN.finditer(text):
        label = "O"
        for start, end, lab in spans:
            if start < m.end() and m.start() < end:
                label = lab
                break
        out.append(label)
    return out


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha (nominal) for units each holding the values of the coders who coded it."""
    coincidence: Counter[tuple[str, str]] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for a, b in itertools.permutations(range(m), 2):
            coincidence[(values[a], values[b])] += 1.0 / (m - 1)
    n_c: Counter[str] = Counter()
    for (c, _), w in coincidence.items():
        n_c[c] += w
    n = sum(n_c.values())
    if n <= 1:
        return None
    observed = sum(w for (c, k), w in coincidence.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    if expected == 0:
        return 1.0
    return 1.0 - observed / expected


def entity_f1(a: Sequence[tuple[int, int, str]], b: Sequence[tuple[int, int, str]]) -> tuple[int, int, int]:
    """(matches, spans of a, spans of b): strict match on offsets and label."""
    return len(set(a) & set(b)), len(set(a)), len(set(b))


def agreement(annotations: Annotations, texts: Mapping[str, str]) -> dict[str, Any]:
    """Observed agreement, Krippendorff's alpha (token level, nominal) and pairwise entity F1."""
    reviewers = sorted(annotations)
    units: list[list[str]] = []
    pair_tokens: dict[tuple[str, str], list[int]] = {p: [0, 0] for p in itertools.combinations(reviewers, 2)}
    pair_entities: dict[tuple[str, str], list[int]] = {p: [0, 0, 0] for p in pair_tokens}
    for doc_id, text in sorted(texts.items()):
        coded = {r: token_labels(text, annotations[r][doc_id]) for r in reviewers if doc_id in annotations[r]}
        if len(coded) >= 2:
            n_tokens = len(next(iter(coded.values())))
            units.extend([coded[r][i] for r in coded] for i in range(n_tokens))
        for a, b in pair_tokens:
            if a in coded and b in coded:
                same = sum(x == y for x, y in zip(coded[a], coded[b], strict=True))
                pair_tokens[(a, b)][0] += same
                pair_tokens[(a, b)][1] += len(coded[a])
                m, na, nb = entity_f1(annotations[a][doc_id], annotations[b][doc_id])
                for i, v in enumerate((m, na, nb)):
                    pair_entities[(a, b)][i] += v
    pairs = []
    for (a, b), (same, total) in pair_tokens.items():
        m, na, nb = pair_entities[(a, b)]
        pairs.append({
            "reviewers": [a, b],
            "tokens": total,
            "observed_agreement": round(same / total, 4) if total else None,
            "entity_f1": round(2 * m / (na + nb), 4) if na + nb else None,
            "entities": [na, nb], "matched": m,
        })  # fmt: skip
    same = sum(p[0] for p in pair_tokens.values())
    total = sum(p[1] for p in pair_tokens.values())
    alpha = krippendorff_alpha_nominal(units)
    return {
        "reviewers": reviewers,
        "documents": sum(1 for d in texts if sum(d in annotations[r] for r in reviewers) >= 2),
        "observed_agreement": round(same / total, 4) if total else None,
        "krippendorff_alpha": None if alpha is None else round(alpha, 4),
        "pairs": pairs,
    }
