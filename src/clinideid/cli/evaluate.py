"""``clinideid evaluate``: score system output against a gold corpus, optionally compare two systems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from clinideid.cli import app
from clinideid.document import Document
from clinideid.errors import ConfigError
from clinideid.evaluate import (
    MODES,
    EvaluationReport,
    LabelView,
    bootstrap_report,
    compare_reports,
    evaluate,
    format_bootstrap,
    format_significance,
    parse_modes,
)
from clinideid.evaluate.counts import METRICS, get_metric
from clinideid.formats import ReadReport, read_corpus
from clinideid.labels import LEVELS

#: reading warnings shown per corpus (a system's output can produce one per span)
MAX_READ_WARNINGS = 10


def read_side(path: Path, fmt: str, side: str) -> list[Document]:
    """Documents of one side, with the codec's warnings and per-document errors shown on stderr."""
    report = ReadReport()
    docs = read_corpus(path, fmt, report=report)
    messages = [*(f"skipped: {e}" for e in report.errors), *report.warnings]
    for m in messages[:MAX_READ_WARNINGS]:
        typer.secho(f"warning ({side}): {m}", err=True, fg=typer.colors.YELLOW)
    if len(messages) > MAX_READ_WARNINGS:
        typer.secho(
            f"warning ({side}): ... {len(messages) - MAX_READ_WARNINGS} more reading warnings not shown",
            err=True,
            fg=typer.colors.YELLOW,
        )
    return docs


def write_json(data: Any, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the JSON report to {path}: {exc.strerror}") from None


def predict_side(gold_docs: list[Document], model: str | None, pipeline: str | None) -> list[Document]:
    """The gold texts annotated by a saved model or by a pipeline's detectors."""
    if model is not None:
        from clinideid.train.evaluation import model_detector, predict

        return predict(model_detector(model), [d.with_spans(()) for d in gold_docs])
    from clinideid.config import OperatorSpec, default_config, load_config
    from clinideid.pipeline import Deidentifier

    assert pipeline is not None
    if pipeline.endswith((".yaml", ".yml")):
        cfg = load_config(pipeline)
    else:  # "es" (the default pipeline) or "es-rules"
        language, _, name = pipeline.partition("-")
        cfg = default_config(language, name or "default")
    deid = Deidentifier(cfg.model_copy(update={"operators": {"default": OperatorSpec(operator="tag")}}))
    out = []
    for doc in gold_docs:
        spans, _ = deid.detect(Document(doc.id, doc.text, doc.language or cfg.language, doc.metadata))
        out.append(doc.with_spans(spans))
    return out


@app.command(
    "evaluate",
    epilog="Example: clinideid evaluate --gold corpora/meddocan/dev --system runs/crf/dev --format brat "
    "--scheme meddocan --level category --json scores.json --compare runs/rules/dev --bootstrap 1000 | "
    "clinideid evaluate --gold corpora/meddocan/dev --format brat --model es-meddocan-crf --scheme meddocan | "
    "clinideid evaluate --gold corpora/meddocan/dev --format brat --pipeline es --scheme meddocan",
)
def evaluate_command(
    gold: Path = typer.Option(
        ..., "--gold", "--corpus", help="Gold corpus (file or folder, depending on the format)."
    ),
    system: Path | None = typer.Option(
        None,
        "--system",
        help="System output to score, same documents as the gold (or use --model/--pipeline).",
    ),
    model: str | None = typer.Option(
        None, "--model", help="Score a saved model (a directory or a packaged model name) on the gold texts."
    ),
    pipeline: str | None = typer.Option(
        None,
        "--pipeline",
        help="Score a pipeline's detectors on the gold texts: a language (its default pipeline), a language and "
        "a packaged pipeline (es-rules) or a config YAML.",
    ),
    fmt: str = typer.Option(..., "--format", "-f", help="Format of the gold (and of the system by default)."),
    system_format: str | None = typer.Option(None, "--system-format", help="Format of the system output."),
    level: str = typer.Option("subcategory", "--level", help="Label level: " + ", ".join(LEVELS) + "."),
    mode: list[str] = typer.Option(
        ["all"], "--mode", help=f"Matching mode(s): {', '.join(MODES)} or all; repeat or comma-separate."
    ),
    scheme: str | None = typer.Option(
        None, "--scheme", help="Label mapping applied to both sides first: a scheme name or a YAML file."
    ),
    label_fallback: str | None = typer.Option(
        None, "--label-fallback", help="Canonical label for labels the scheme does not map (e.g. OTHER_PHI)."
    ),
    hipaa_only: bool = typer.Option(False, "--hipaa-only", help="Score only labels HIPAA requires removing."),
    allow_missing: bool = typer.Option(
        False, "--allow-missing", help="Score a document missing on one side as empty (with a warning)."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the full report as JSON here."),
    audit: bool = typer.Option(
        False, "--audit", help="Also report how many true leaks the residual-risk audit flags (counts only)."
    ),
    compare: Path | None = typer.Option(
        None, "--compare", help="A second system's output: test whether the two differ significantly."
    ),
    shuffles: int = typer.Option(9999, "--shuffles", help="Shuffles of the approximate randomization test."),
    seed: int = typer.Option(1, "--seed", help="Random seed of the significance test and the bootstrap."),
    metric: str = typer.Option("micro_f1", "--metric", help="Metric tested: " + ", ".join(METRICS) + "."),
    bootstrap: int = typer.Option(
        0, "--bootstrap", help="Bootstrap samples for confidence intervals (0: none)."
    ),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence level of bootstrap intervals."),
    show_text: bool = typer.Option(
        False,
        "--show-text",
        help="Show the text of leaked tokens. This prints PHI: use on secure machines only.",
    ),
    per_document: bool = typer.Option(
        False, "--per-document", help="Add per-document scores and the leaked tokens' offsets."
    ),
) -> None:
    """Score system output against gold annotations (strict, relaxed, token and span matching)."""
    # check every option before reading corpora, so a typo fails fast
    modes = parse_modes(mode)
    get_metric(metric)
    LabelView.build(level, scheme, hipaa_only, label_fallback)
    if bootstrap < 0:
        raise ConfigError(f"--bootstrap must be 0 or more, got {bootstrap}")
    if bootstrap and not 0.0 < confidence < 1.0:
        raise ConfigError(f"--confidence must be between 0 and 1, got {confidence}")
    if compare is not None and shuffles < 1:
        raise ConfigError(f"--shuffles must be positive, got {shuffles}")
    if sum(x is not None for x in (system, model, pipeline)) != 1:
        raise ConfigError("give exactly one of --system, --model or --pipeline")
    sys_fmt = system_format or fmt
    gold_docs = read_side(gold, fmt, "gold")
    if system is not None:
        system_docs = read_side(system, sys_fmt, "system")
    else:
        system_docs = predict_side(gold_docs, model, pipeline)
    compare_docs = read_side(compare, sys_fmt, "compared system") if compare is not None else None
    options: dict[str, Any] = {
        "level": level,
        "modes": modes,
        "scheme": scheme,
        "label_fallback": label_fallback,
        "hipaa_only": hipaa_only,
        "allow_missing": allow_missing,
    }
    report = evaluate(gold_docs, system_docs, include_text=show_text, **options)
    for w in report.warnings:
        typer.secho(f"warning: {w}", err=True, fg=typer.colors.YELLOW)
    typer.echo(report.format_table(per_document=per_document or show_text), nl=False)
    out: dict[str, Any] = report.to_dict()
    other: EvaluationReport | None = None
    if compare_docs is not None:
        other = evaluate(gold_docs, compare_docs, **options)
        for w in other.warnings:
            typer.secho(f"warning (compared system): {w}", err=True, fg=typer.colors.YELLOW)
        tests = [compare_reports(report, other, m, metric, shuffles=shuffles, seed=seed) for m in modes]
        typer.echo("\n" + format_significance(tests))
        out["compared_system"] = other.to_dict(per_document=False)
        out["significance"] = [t.to_dict() for t in tests]
    if bootstrap:
        intervals = [
            bootstrap_report(report, m, metric, samples=bootstrap, confidence=confidence, seed=seed)
            for m in modes
        ]
        if other is not None:
            intervals += [
                bootstrap_report(
                    report, m, metric, other=other, samples=bootstrap, confidence=confidence, seed=seed
                )
                for m in modes
            ]
        typer.echo("\n" + format_bootstrap(intervals))
        out["bootstrap"] = [b.to_dict() for b in intervals]
    if audit:
        from clinideid.audit.gold import audit_against_gold

        out["residual_audit"] = found = audit_against_gold(gold_docs, system_docs)
        typer.echo(
            f"\nresidual-risk audit: {found['leaks_flagged']} of {found['true_leaks']} true leaks flagged "
            f"({found['leaks_flagged_top']} by a top-ranked flag); {found['flags_per_1k_chars']} flags per 1,000 characters"
        )
    if json_out is not None:
        write_json(out, json_out)
        typer.echo(f"\nJSON report written to {json_out}")
