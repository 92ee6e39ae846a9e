"""``clinideid deid``: de-identify a text file, a folder, JSONL or a corpus; write texts, annotations, summary."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from clinideid.batch.inputs import DEFAULT_MAX_BYTES, count_inputs, iter_inputs
from clinideid.batch.outputs import OutputWriter
from clinideid.batch.runner import patient_id_getter, run_batch
from clinideid.cli import app
from clinideid.config import load_config
from clinideid.errors import ConfigError, InputError
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.text.language import SUPPORTED


def _parse_operator_overrides(values: list[str]) -> dict[str, dict]:
    """``LABEL=OPERATOR`` or ``LABEL=OPERATOR:key=value,key=value`` (option values as in ``convert``)."""
    from clinideid.cli.convert import parse_options

    out: dict[str, dict] = {}
    for v in values:
        label, sep, rest = v.partition("=")
        op, _, opts = rest.partition(":")
        if not sep or not label or not op:
            raise ConfigError(
                f"bad --operator {v!r}; use LABEL=OPERATOR or LABEL=OPERATOR:key=value,key=value, "
                "e.g. --operator DATE=date_generalize:strategy=quarter"
            )
        options = parse_options([o for o in opts.split(",") if o], "--operator option") if opts else {}
        out[label.strip()] = {"operator": op.strip(), "options": options}
    return out


def _load_key(key_file: Path | None, ephemeral: bool) -> bytes | None:
    from clinideid.transform.keys import ephemeral_key, load_key

    if key_file is not None and ephemeral:
        raise ConfigError("give either --key-file or --ephemeral-key, not both")
    if key_file is not None:
        return load_key(key_file)
    if ephemeral:
        return ephemeral_key()
    return None


@app.command(
    epilog=(
        "Examples: clinideid deid notes/ -o safe/ --language es --key-file secret.key | "
        "clinideid deid notes.jsonl -o safe/ --operator DATE=date_generalize --ephemeral-key | "
        "clinideid deid corpus/ --format brat -o safe/ --operator default=tag"
    )
)
def deid(
    source: Path = typer.Argument(
        ..., help="A text file, a folder of .txt files, a .jsonl file, or a corpus."
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Output folder (created if missing)."),
    language: str = typer.Option("auto", "--language", "-l", help="auto, " + ", ".join(SUPPORTED)),
    config: Path | None = typer.Option(None, "--config", "-c", help="Pipeline config YAML."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="Input format: text, jsonl, or a corpus codec (brat, i2b2, ...)."
    ),
    operator: list[str] = typer.Option(
        [],
        "--operator",
        help="Per-label operator: LABEL=OPERATOR[:key=value,...] (label, category or 'default'); repeatable.",
    ),
    model: list[str] = typer.Option(
        [], "--model", "-m", help="A trained model (directory or packaged name) to detect with; repeatable."
    ),
    strategy: str = typer.Option(
        "model_first",
        "--strategy",
        help="How --model combines with the rules: model_first, rules_first, union.",
    ),
    rules: bool = typer.Option(
        True, "--rules/--no-rules", help="With --model: also run the language's rules."
    ),
    key_file: Path | None = typer.Option(
        None, "--key-file", help="Secret key for surrogates/hash/date shift."
    ),
    ephemeral_key: bool = typer.Option(
        False, "--ephemeral-key", help="Use a random one-off key (surrogates not reproducible across runs)."
    ),
    scope: str | None = typer.Option(None, "--scope", help="Surrogate scope: document, patient or corpus."),
    patient_id: str | None = typer.Option(
        None, "--patient-id", help="Patient id source: metadata:FIELD or filename:REGEX (first group)."
    ),
    annotations: str = typer.Option(
        "jsonl", "--annotations", help="brat, jsonl (report.jsonl only) or none."
    ),
    encoding: str = typer.Option("utf-8", "--encoding", help="Encoding of text inputs."),
    max_bytes: int = typer.Option(
        DEFAULT_MAX_BYTES, "--max-bytes", help="Skip (with an error) larger inputs."
    ),
    resume: bool = typer.Option(False, "--resume", help="Skip documents whose output already exists."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """De-identify clinical notes: detect PHI, replace it, write the texts plus a report and a summary."""
    if language != "auto" and language not in SUPPORTED:
        raise ConfigError(f"unsupported language {language!r}; choose auto or one of {', '.join(SUPPORTED)}")
    if annotations not in ("brat", "jsonl", "none"):
        raise ConfigError("--annotations must be brat, jsonl or none")
    if not source.exists():
        raise InputError(f"input path {source} does not exist")
    overrides: dict = {}
    if operator:
        overrides["operators"] = _parse_operator_overrides(operator)
    if scope is not None:
        if scope not in ("document", "patient", "corpus"):
            raise ConfigError("--scope must be document, patient or corpus")
        overrides["scope"] = scope
    if model:
        if strategy not in ("model_first", "rules_first", "union"):
            raise ConfigError("--strategy must be model_first, rules_first or union")
        overrides.update({"models": model, "strategy": strategy, "rules": rules})
    key = _load_key(key_file, ephemeral_key)
    cfg = load_config(config) if config is not None else None
    deidentifier = MultilingualDeidentifier(language, key, cfg, overrides)
    get_patient = patient_id_getter(patient_id)

    items = iter_inputs(source, fmt, None if language == "auto" else language, encoding, max_bytes)
    jsonl_name = (
        source.name if (fmt in (None, "jsonl") and source.is_file() and source.suffix == ".jsonl") else None
    )
    writer = OutputWriter(output, annotations, jsonl_name, append=resume)
    total = count_inputs(source, fmt)
    if progress and (total is None or total > 1):
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("de-identifying", total=total)
            summary = run_batch(items, deidentifier, writer, get_patient, resume, lambda: bar.advance(task))
    else:
        summary = run_batch(items, deidentifier, writer, get_patient, resume)
    d = summary.to_dict()
    typer.echo(
        f"{d['succeeded']}/{d['documents']} documents de-identified, {d['failed']} failed, "
        f"{d['skipped']} skipped; {sum(d['spans_per_label'].values())} spans replaced -> {output}"
    )
    if d["spans_per_label"]:
        typer.echo("spans per label: " + json.dumps(d["spans_per_label"]))
    for err in d["errors"][:20]:
        typer.secho(f"  failed {err['id']}: {err['error']}", err=True, fg=typer.colors.YELLOW)
