"""Readable, aligned text tables for evaluation results (JSON comes from each result's ``to_dict``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from clinideid.evaluate.counts import Counts
from clinideid.evaluate.prepare import label_order

if TYPE_CHECKING:
    from clinideid.evaluate.results import EvaluationReport
    from clinideid.evaluate.significance import BootstrapResult, SignificanceResult

Cell = str | int | float | None

#: the widest confusion matrix printed as a grid; wider ones are listed pair by pair
MAX_MATRIX_COLUMNS = 12
#: leaked tokens listed in the text report (the JSON report lists them all)
MAX_LISTED_LEAKS = 50
#: documents listed under "Documents leaking most"
MAX_LISTED_DOCUMENTS = 10


def fmt(value: Cell, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], title: str | None = None) -> str:
    """An aligned plain-text table: numeric columns right-aligned, the others left-aligned."""
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for j, c in enumerate(row):
            widths[j] = max(widths[j], len(c))
    numeric = [
        j > 0 and all(isinstance(row[j], int | float) or row[j] is None for row in rows)
        for j in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(widths[j]) if numeric[j] else v.ljust(widths[j]) for j, v in enumerate(values)]
        return "  ".join(parts).rstrip()

    out = [title] if title else []
    out.append(line(headers))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def sorted_counts(counter: Mapping[str, int]) -> list[tuple[str, int]]:
    """(label, count) pairs in taxonomy order."""
    return [(lab, counter[lab]) for lab in label_order(counter)]


def _counts_row(name: str, c: Counts) -> list[Cell]:
    return [name, c.precision, c.recall, c.f1, c.tp, c.fp, c.fn, c.support]


COUNT_HEADERS = ["label", "precision", "recall", "f1", "tp", "fp", "fn", "support"]


def format_report(report: EvaluationReport, per_document: bool = False) -> str:
    opts = report.options
    head = (
        f"Evaluation of {len(report.documents)} documents - level: {opts.get('level')}, "
        f"scheme: {opts.get('scheme') or 'as annotated'}, HIPAA only: {'yes' if opts.get('hipaa_only') else 'no'}"
    )
    blocks = [head]
    summary = []
    for mode, res in report.results.items():
        t, mi, ma = res.total, res.micro, res.macro
        summary.append(
            [mode, mi.precision, mi.recall, mi.f1, ma.precision, ma.recall, ma.f1, t.tp, t.fp, t.fn]
        )
    blocks.append(
        text_table(
            ["mode", "micro P", "micro R", "micro F1", "macro P", "macro R", "macro F1", "tp", "fp", "fn"],
            summary,
            title="Summary (0/0 counts as 0; macro = mean over labels seen in gold or system)",
        )
    )
    for mode, res in report.results.items():
        per_label = res.per_label()
        if len(per_label) <= 1 and mode != "strict":
            continue  # label-free modes: the summary line says it all
        rows = [_counts_row(lab, c) for lab, c in per_label.items()]
        rows.append(_counts_row("(micro)", res.total))
        blocks.append(text_table(COUNT_HEADERS, rows, title=f"Per label - {mode}"))
    blocks.append(_format_confusion(report))
    blocks.append(_format_leaks(report, list_tokens=per_document))
    if per_document:
        blocks.append(_format_documents(report))
    if report.warnings:
        blocks.append("Warnings\n" + "\n".join(f"- {w}" for w in report.warnings))
    return "\n\n".join(blocks) + "\n"


def _format_confusion(report: EvaluationReport) -> str:
    table = report.confusion
    title = "Confusion (rows: gold label, columns: system label; overlapping spans paired one to one)"
    cols = table.system_labels
    if not table.cells:
        return title + "\n(no spans on either side)"
    if len(cols) <= MAX_MATRIX_COLUMNS:
        return text_table(["gold \\ system", *cols], table.rows(), title=title)
    rows: list[list[Cell]] = [[g, s, n] for g, s, n in table.confusions()]
    for g in table.gold_labels:
        if table[g, "MISSED"]:
            rows.append([g, "MISSED", table[g, "MISSED"]])
    for s in cols:
        if table["SPURIOUS", s]:
            rows.append(["SPURIOUS", s, table["SPURIOUS", s]])
    if not rows:
        return title + "\nno confusion: every span paired with a span of the same label"
    return text_table(["gold", "system", "count"], rows, title=title + " - non-diagonal cells")


def _format_leaks(report: EvaluationReport, list_tokens: bool) -> str:
    leaks = report.leaks
    s = leaks.score
    lines = [
        "Leaks",
        f"leak score (MEDDOCAN: strict false negatives / gold sentences): {s.score:.4f} "
        f"({s.missed_entities} / {s.sentences})",
        f"gold PHI tokens no system span covers: {len(leaks.leaked)} of {leaks.gold_tokens} "
        f"({leaks.token_leak_rate:.2%})",
    ]
    if not leaks.leaked:
        return "\n".join(lines)
    by_label = leaks.leaked_by_label
    rows: list[list[Cell]] = [
        [lab, by_label.get(lab, 0), n, by_label.get(lab, 0) / n if n else 0.0]
        for lab, n in sorted_counts(leaks.gold_tokens_by_label)
    ]
    lines.append("")
    lines.append(text_table(["label", "leaked", "gold tokens", "rate"], rows))
    worst = leaks.leaked_by_document.most_common(MAX_LISTED_DOCUMENTS)
    doc_rows: list[list[Cell]] = [[doc, n, leaks.gold_tokens_by_document[doc]] for doc, n in worst]
    lines.append("")
    lines.append(text_table(["document", "leaked", "gold tokens"], doc_rows, title="Documents leaking most"))
    if not list_tokens:
        return "\n".join(lines)
    shown = leaks.leaked[:MAX_LISTED_LEAKS]
    token_rows: list[list[Cell]] = [
        [t.document, t.start, t.end, t.label, *([t.text] if leaks.includes_text else [])] for t in shown
    ]
    headers = ["document", "start", "end", "label", *(["text"] if leaks.includes_text else [])]
    more = len(leaks.leaked) - len(shown)
    lines.append("")
    lines.append(
        text_table(
            headers,
            token_rows,
            title="Leaked tokens" + (f" (first {len(shown)}; all in JSON)" if more else ""),
        )
    )
    return "\n".join(lines)


def _format_documents(report: EvaluationReport) -> str:
    mode = "strict" if "strict" in report.results else next(iter(report.results))
    per_doc = report[mode].per_document()
    leaked = report.leaks.leaked_by_document
    rows: list[list[Cell]] = [
        [doc, c.precision, c.recall, c.f1, c.tp, c.fp, c.fn, leaked.get(doc, 0)] for doc, c in per_doc.items()
    ]
    return text_table(
        ["document", "precision", "recall", "f1", "tp", "fp", "fn", "leaked tokens"],
        rows,
        title=f"Per document - {mode}",
    )


def format_significance(results: Sequence[SignificanceResult]) -> str:
    rows: list[list[Cell]] = [
        [r.mode or "-", r.metric, r.score_a, r.score_b, r.difference, r.p_value, r.shuffles] for r in results
    ]
    return text_table(
        ["mode", "metric", "system", "compared", "difference", "p-value", "shuffles"],
        rows,
        title="Approximate randomization test (paired, two-sided, documents swapped; p = (r+1)/(N+1))",
    )


def format_bootstrap(results: Sequence[BootstrapResult]) -> str:
    rows: list[list[Cell]] = [
        [
            r.mode or "-",
            r.metric,
            "a - b" if r.difference else "system",
            r.estimate,
            r.low,
            r.high,
            f"{r.confidence:.0%}",
            r.samples,
        ]
        for r in results
    ]
    return text_table(
        ["mode", "metric", "of", "estimate", "low", "high", "level", "samples"],
        rows,
        title="Bootstrap confidence intervals (documents resampled, percentile method)",
    )
