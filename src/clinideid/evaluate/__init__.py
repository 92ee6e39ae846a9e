"""Evaluation of de-identification: matching modes, metrics, significance tests, leak and text reports.

Start with ``evaluate(gold_docs, system_docs)``; it returns an ``EvaluationReport`` with one
``ModeResult`` per mode (``MODES``), a confusion table and a leak report, each with ``to_dict()`` for JSON
and ``format_table()`` for reading.
"""

from clinideid.evaluate.confusion import MISSED, SPURIOUS, ConfusionTable, confusion_table
from clinideid.evaluate.counts import (
    METRICS,
    Counts,
    Scores,
    macro_f1,
    macro_precision,
    macro_recall,
    macro_scores,
    micro_f1,
    micro_precision,
    micro_recall,
    micro_scores,
    safe_div,
)
from clinideid.evaluate.evaluator import evaluate, parse_modes
from clinideid.evaluate.leaks import LeakedToken, LeakReport, LeakScore, count_sentences
from clinideid.evaluate.matching import (
    MODES,
    TokenIndex,
    greedy_overlap_matches,
    merge_adjacent,
    merged_counts,
    relaxed_counts,
    span_counts,
    strict_counts,
    token_counts,
)
from clinideid.evaluate.prepare import LabelView, pair_documents
from clinideid.evaluate.report import format_bootstrap, format_significance, text_table
from clinideid.evaluate.results import EvaluationReport, ModeResult
from clinideid.evaluate.significance import (
    BootstrapResult,
    SignificanceResult,
    approximate_randomization,
    bootstrap,
    bootstrap_report,
    compare_reports,
)

__all__ = [
    "METRICS",
    "MISSED",
    "MODES",
    "SPURIOUS",
    "BootstrapResult",
    "ConfusionTable",
    "Counts",
    "EvaluationReport",
    "LabelView",
    "LeakReport",
    "LeakScore",
    "LeakedToken",
    "ModeResult",
    "Scores",
    "SignificanceResult",
    "TokenIndex",
    "approximate_randomization",
    "bootstrap",
    "bootstrap_report",
    "compare_reports",
    "confusion_table",
    "count_sentences",
    "evaluate",
    "format_bootstrap",
    "format_significance",
    "greedy_overlap_matches",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "macro_scores",
    "merge_adjacent",
    "merged_counts",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "micro_scores",
    "pair_documents",
    "parse_modes",
    "relaxed_counts",
    "safe_div",
    "span_counts",
    "strict_counts",
    "text_table",
    "token_counts",
]
