"""``evaluate``: score a system's documents against gold documents in several modes at once."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.evaluate.confusion import ConfusionTable
from clinideid.evaluate.counts import Counts
from clinideid.evaluate.leaks import LeakReport, LeakScore, SentenceCounter, count_sentences, leaked_tokens
from clinideid.evaluate.matching import (
    MODES,
    TokenIndex,
    merged_counts,
    relaxed_counts,
    span_counts,
    strict_counts,
    token_counts,
    unique_spans,
)
from clinideid.evaluate.prepare import DocumentPair, LabelView, label_order, pair_documents
from clinideid.evaluate.results import EvaluationReport, ModeResult
from clinideid.labels import LabelMapping

log = logging.getLogger(__name__)


def parse_modes(modes: str | Iterable[str] | None) -> tuple[str, ...]:
    """Mode names from a list or a comma-separated string; ``all`` (or None) means every mode."""
    if modes is None:
        return MODES
    items = [modes] if isinstance(modes, str) else list(modes)
    names = [m.strip() for item in items for m in item.split(",") if m.strip()]
    if not names or "all" in names:
        return MODES
    bad = [m for m in names if m not in MODES]
    if bad:
        raise ConfigError(
            f"unknown evaluation mode(s) {', '.join(bad)}; choose from {', '.join(MODES)} or all"
        )
    return tuple(dict.fromkeys(names))


def evaluate(
    gold: Iterable[Document],
    system: Iterable[Document],
    *,
    level: str = "subcategory",
    modes: str | Iterable[str] | None = None,
    scheme: str | Path | LabelMapping | None = None,
    label_fallback: str | None = None,
    hipaa_only: bool = False,
    allow_missing: bool = False,
    include_text: bool = False,
    sentence_counter: SentenceCounter = count_sentences,
) -> EvaluationReport:
    """Score ``system`` against ``gold`` (documents matched by id).

    ``level``: subcategory, category or binary. ``modes``: any of ``MODES`` (default: all). ``scheme``: a
    label mapping name or file applied to both sides first. ``hipaa_only`` keeps only spans whose canonical
    label HIPAA Safe Harbor requires removing. ``include_text`` puts the text of leaked tokens (PHI) in the
    leak report. The leak score (MEDDOCAN) and the confusion table are always computed.
    """
    selected = parse_modes(modes)
    view = LabelView.build(level, scheme, hipaa_only, label_fallback)
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        log.warning(message)

    pairs = pair_documents(gold, system, view, allow_missing=allow_missing, warn=warn)
    per_mode: dict[str, dict[str, dict[str, Counts]]] = {m: {} for m in selected}
    confusion = ConfusionTable()
    leaked = []
    gold_by_label: Counter[str] = Counter()
    gold_by_doc: Counter[str] = Counter()
    missed_entities = 0
    sentences = 0
    for pair in pairs:
        gold_spans = unique_spans(pair.gold)
        sys_spans = unique_spans(pair.system)
        tokens = TokenIndex(pair.text)
        strict = strict_counts(gold_spans, sys_spans)
        for mode in selected:
            per_mode[mode][pair.id] = strict if mode == "strict" else _score(mode, pair, tokens)
        confusion.add_document(gold_spans, sys_spans)
        missed_entities += sum(c.fn for c in strict.values())
        sentences += sentence_counter(pair.id, pair.text)
        doc_leaks, gold_tokens = leaked_tokens(
            pair.id, pair.text, gold_spans, sys_spans, tokens, include_text=include_text
        )
        leaked.extend(doc_leaks)
        gold_by_label.update(gold_tokens.values())
        gold_by_doc[pair.id] = len(gold_tokens)
    results = {mode: _mode_result(mode, per_mode[mode]) for mode in selected}
    leaks = LeakReport(
        score=LeakScore(missed_entities, sentences),
        leaked=leaked,
        gold_tokens_by_label=gold_by_label,
        gold_tokens_by_document=gold_by_doc,
        includes_text=include_text,
    )
    options: dict[str, object] = {**view.describe(), "modes": list(selected), "allow_missing": allow_missing}
    return EvaluationReport(
        options=options,
        documents=tuple(p.id for p in pairs),
        results=results,
        confusion=confusion,
        leaks=leaks,
        warnings=warnings,
    )


def _score(mode: str, pair: DocumentPair, tokens: TokenIndex) -> dict[str, Counts]:
    if mode == "relaxed":
        return relaxed_counts(pair.gold, pair.system)
    if mode == "span":
        return span_counts(pair.gold, pair.system)
    if mode == "span_merged":
        return merged_counts(pair.gold, pair.system, pair.text)
    if mode == "token":
        return token_counts(pair.gold, pair.system, tokens)
    if mode == "token_binary":
        return token_counts(pair.gold, pair.system, tokens, binary=True)
    raise ConfigError(f"unknown evaluation mode {mode!r}")


def _mode_result(mode: str, per_document: dict[str, dict[str, Counts]]) -> ModeResult:
    labels: Sequence[str] = label_order(lab for counts in per_document.values() for lab in counts)
    return ModeResult.from_documents(mode, per_document, labels)
