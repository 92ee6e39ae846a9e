"""``clinideid deid``: de-identify a text file, a folder, JSONL or a corpus; write texts, annotations, summary."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from clinideid.audit.html import write_audit_html
from clinideid.batch.inputs import DEFAULT_MAX_BYTES, InputItem, count_inputs, is_jsonl, iter_inputs
from clinideid.batch.journal import settings_fingerprint, writing
from clinideid.batch.limits import parse_size
from clinideid.batch.paths import AUDIT_HTML_NAME, NAMING, STATE_DIR, TMP_DIR, check_paths
from clinideid.batch.records import FieldPolicy
from clinideid.batch.runner import (
    BatchOptions,
    patient_id_getter,
    run_batch,
)
from clinideid.cli import app, options
from clinideid.cli.deid_tables import (
    TableArgs,
    check_table_args,
    is_stream,
    run_stdin,
    run_tables,
    table_format,
)
from clinideid.cli.outcome import finish
from clinideid.config import PIPELINES, load_config
from clinideid.errors import ConfigError, InputError
from clinideid.ingest import IngestOptions
from clinideid.pipeline import MultilingualDeidentifier
from clinideid.text.decoding import check_encoding
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


def config_overrides(operator: list[str], scope: str | None) -> dict:
    """Pipeline overrides from ``--operator`` and ``--scope`` (shared by the batch commands)."""
    overrides: dict = {}
    if operator:
        overrides["operators"] = _parse_operator_overrides(operator)
    if scope is not None:
        if scope not in ("document", "patient", "corpus"):
            raise ConfigError("--scope must be document, patient or corpus")
        overrides["scope"] = scope
    return overrides


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
        "clinideid deid corpus/ --format brat -o safe/ --operator default=tag | "
        "clinideid deid notes/ -o safe/ --key-file secret.key --resume | "
        "clinideid deid notes.csv -o safe/ --id-column id --text-column note -l en --key-file secret.key | "
        "clinideid deid --from-sql sqlite:///notes.db --query 'SELECT id, note FROM notes' --id-column id "
        "--text-column note --to-sql sqlite:///safe.db --table notes_deid --key-file secret.key | "
        "cat notes.jsonl | clinideid deid - -l en --ephemeral-key > safe.jsonl | "
        "clinideid deid big.jsonl -o safe/ --key-file secret.key --workers 4 | "
        "clinideid deid scans/ -o safe/ -l de --key-file secret.key (DOCX, PDF, images: see Documents). "
        "Documents: .docx .doc .rtf .odt .pdf .png .jpg .tif in a folder or alone are read to text (scanned "
        "PDF pages and images by Tesseract OCR, language packs eng deu ita rus spa fra from the document's "
        "--language, every pack with auto); beside each text output (scan.pdf.txt) the document is written "
        "in its own format: DOCX with replacements in place and its properties cleared, PDF and images with "
        "PHI burned out as image-only files without metadata, .doc/.rtf/.odt as a new DOCX. Needs "
        "pip install 'clinideid\\[documents]' and the Debian packages tesseract-ocr tesseract-ocr-LANG antiword. "
        "Other file types are failed inputs; hidden and system files are ignored. "
        "Limits: each document is read, de-identified and written in a worker process within --time-limit and "
        "--memory-limit; DOCX/ODT, PDF and images are checked against --max-unzipped-bytes, --max-zip-ratio, "
        "--max-pages and --max-pixels before they are decompressed; a document over a limit fails alone. "
        "Exit codes: 0 every document done; 3 some documents failed (see summary.json; "
        "--allow-failures makes it 0); 2 a problem of the whole run (nothing written); "
        "4 an output could not be written (disk full, read-only or not writable: fix it, then the same "
        "command with --resume); 130 stopped by SIGINT/SIGTERM (finish with --resume)."
    )
)
def deid(
    source: Path | None = typer.Argument(
        None,
        help="A text file, a folder of .txt files and documents (.docx .doc .rtf .odt .pdf .png .jpg .tif), a "
        "document, a .jsonl file, a corpus, a .csv/.parquet table, or '-' "
        "(JSONL records on stdin, de-identified records on stdout).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Output folder (created if missing; never inside or containing the input).",
    ),
    language: str = typer.Option("auto", "--language", "-l", help="auto, " + ", ".join(SUPPORTED)),
    config: Path | None = typer.Option(None, "--config", "-c", help="Pipeline config YAML."),
    pipeline: str = typer.Option(
        "default",
        "--pipeline",
        help="Packaged pipeline: default (rules and the shipped learned model) or rules (the rule packs "
        "alone, no model).",
    ),
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
    ephemeral_key: bool = options.EPHEMERAL_KEY,
    scope: str | None = options.SCOPE,
    patient_id: str | None = typer.Option(
        None,
        "--patient-id",
        help="Patient id source: metadata:FIELD or filename:REGEX (first group); for tables column:NAME.",
    ),
    annotations: str = typer.Option(
        "jsonl", "--annotations", help="brat, jsonl (report.jsonl only) or none."
    ),
    encoding: str = typer.Option(
        "auto",
        "--encoding",
        help="Encoding of inputs without a byte-order mark (a BOM always wins). auto: per document, UTF-8 or "
        "the one of cp1252, iso8859-15, cp1251, koi8-r that reads it as clean text (recorded in its report); "
        "tables and corpus formats: UTF-8. A named encoding that reads a document as mojibake fails it.",
    ),
    max_bytes: int = typer.Option(
        DEFAULT_MAX_BYTES, "--max-bytes", help="Larger files (or JSONL records) are errors, not read."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Finish an earlier run into the same -o: redo what is not done or failed."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace an earlier run in -o (or write into a non-empty folder)."
    ),
    name_outputs: str = typer.Option(
        "id",
        "--name-outputs",
        help="Name outputs and report ids by the input's id ('id') or by a keyed hash of it ('hash').",
    ),
    keep_field: list[str] = typer.Option(
        [], "--keep-field", help="JSONL: a top-level field to copy verbatim (not de-identified); repeatable."
    ),
    drop_fields: bool = typer.Option(
        False, "--drop-fields", help="JSONL: drop every field but the text, ids, language and --keep-field."
    ),
    time_limit: float | None = options.TIME_LIMIT,
    memory_limit: str | None = options.MEMORY_LIMIT,
    max_unzipped_bytes: str = typer.Option(
        "200M",
        "--max-unzipped-bytes",
        help="Documents: a DOCX or ODT whose parts would unzip to more is refused before it is read (0: none).",
    ),
    max_zip_ratio: float = typer.Option(
        100.0,
        "--max-zip-ratio",
        help="Documents: a DOCX or ODT with a part that unzips to more times its compressed size is refused "
        "(a zip bomb; 0: none).",
    ),
    max_pages: int = typer.Option(
        2000,
        "--max-pages",
        help="Documents: PDFs and TIFFs with more pages are refused before reading (0: none).",
    ),
    max_pixels: int = typer.Option(
        100_000_000,
        "--max-pixels",
        help="Documents: images with more pixels per page are refused before decoding; PDF pages are rendered "
        "at fewer dots to fit (0: none).",
    ),
    allow_failures: bool = typer.Option(
        False, "--allow-failures", help="Exit 0 even when some documents failed."
    ),
    fsync: bool = typer.Option(
        False, "--fsync", help="Sync every output to disk before recording it (survives power loss; slower)."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        "-j",
        help="Worker processes (default: every core, fewer for small inputs; at least one: documents are "
        "computed apart from the process that writes). Outputs are the same whatever the number.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    ocr_min_confidence: float = typer.Option(
        60.0,
        "--ocr-min-confidence",
        help="Documents: an OCR'd page whose mean word confidence (0-100) is below this gets a warning in "
        "the report and summary.",
    ),
    ocr_languages: str | None = typer.Option(
        None,
        "--ocr-languages",
        help="Documents: Tesseract language packs, e.g. deu+eng (default: from --language; all with auto).",
    ),
    from_sql: str | None = typer.Option(
        None, "--from-sql", help="Tables: read rows from this database URL (SQLAlchemy), with --query."
    ),
    query: str | None = typer.Option(None, "--query", help="Tables: the SELECT that gives the rows."),
    to_sql: str | None = typer.Option(
        None, "--to-sql", help="Tables: write rows to this database URL, into --table."
    ),
    table: str | None = typer.Option(None, "--table", help="Tables: the output table (created if missing)."),
    report_table: str | None = typer.Option(
        None, "--report-table", help="Tables: the report table (default: <table>_report)."
    ),
    id_column: str | None = typer.Option(None, "--id-column", help="Tables: the column naming each row."),
    text_column: list[str] = typer.Option(
        [], "--text-column", help="Tables: a column to de-identify; repeatable."
    ),
    language_column: str | None = typer.Option(
        None, "--language-column", help="Tables: a column with each row's language code."
    ),
    output_format: str | None = typer.Option(
        None, "--output-format", help="Tables written to -o: csv or parquet (default: the input's)."
    ),
    batch_size: int = typer.Option(
        500, "--batch-size", help="Tables: rows written together (one transaction or part file)."
    ),
) -> None:
    """De-identify clinical notes: detect PHI, replace it, write the texts plus a report and a summary.

    Outputs are written atomically and recorded in a journal (-o/.clinideid/): a killed or interrupted run
    is finished with --resume, and every document is written exactly once.
    """
    if language != "auto" and language not in SUPPORTED:
        raise ConfigError(f"unsupported language {language!r}; choose auto or one of {', '.join(SUPPORTED)}")
    if annotations not in ("brat", "jsonl", "none"):
        raise ConfigError("--annotations must be brat, jsonl or none")
    if name_outputs not in NAMING:
        raise ConfigError(f"--name-outputs must be one of {', '.join(NAMING)}")
    if max_bytes < 1:
        raise ConfigError("--max-bytes must be a positive number of bytes")
    if time_limit is not None and time_limit < 0:
        raise ConfigError("--time-limit must be 0 (no limit) or a positive number of seconds")
    memory = None if memory_limit is None else parse_size(memory_limit, "--memory-limit")
    if max_zip_ratio < 0 or max_pages < 0 or max_pixels < 0:
        raise ConfigError("--max-zip-ratio, --max-pages and --max-pixels must be 0 (no limit) or positive")
    ingest = IngestOptions(
        min_confidence=ocr_min_confidence,
        ocr_languages=ocr_languages,
        max_unzipped_bytes=parse_size(max_unzipped_bytes, "--max-unzipped-bytes"),
        max_zip_ratio=max_zip_ratio,
        max_pages=max_pages,
        max_pixels=max_pixels,
    )
    if resume and overwrite:
        raise ConfigError("give either --resume or --overwrite, not both")
    if workers is not None and workers < 1:
        raise ConfigError("--workers must be 1 or more (leave it out for one per core)")
    check_encoding(encoding)
    stream = is_stream(source)
    table_fmt = table_format(source, fmt)
    tables = table_fmt is not None or from_sql is not None or to_sql is not None
    if not stream and not tables:
        if source is None:
            raise ConfigError("give an input: a file, a folder, '-' for stdin, or --from-sql URL")
        if output is None:
            raise ConfigError("give an output folder with -o/--output")
        if not source.exists():
            raise InputError(f"input path {source} does not exist")
        check_paths(source, output)
    if stream and (output is not None or tables):
        raise ConfigError("'-' writes de-identified records to stdout: leave out -o and the table options")
    if (stream or tables) and (name_outputs != "id" or annotations == "brat" or (resume and stream)):
        raise ConfigError(
            "--name-outputs hash, --annotations brat and (for '-') --resume apply to files only"
        )
    if tables:
        args = TableArgs(
            source,
            table_fmt,
            output,
            from_sql,
            query,
            to_sql,
            table,
            report_table,
            id_column,
            text_column,
            language_column,
            patient_id,
            drop_fields,
            output_format,
            batch_size,
            encoding,
            max_bytes,
            time_limit,
            resume,
            overwrite,
            fsync,
        )
        check_table_args(args)
    overrides = config_overrides(operator, scope)
    if pipeline != "default":
        if pipeline not in PIPELINES:
            raise ConfigError(f"--pipeline must be one of {', '.join(PIPELINES)}")
        if config is not None:
            raise ConfigError("--pipeline names a packaged pipeline: leave it out with --config")
        overrides["pipeline"] = pipeline
    if model:
        if strategy not in ("model_first", "rules_first", "union"):
            raise ConfigError("--strategy must be model_first, rules_first or union")
        overrides.update({"models": model, "strategy": strategy, "rules": rules})
    key = _load_key(key_file, ephemeral_key)
    if resume and ephemeral_key:
        raise ConfigError(
            "--resume needs the key of the run it finishes: use --key-file, not --ephemeral-key"
        )
    cfg = load_config(config) if config is not None else None
    get_patient = None if tables else patient_id_getter(patient_id)
    deidentifier = MultilingualDeidentifier(language, key, cfg, overrides)
    if stream or tables:  # computed in this process (files are computed in worker processes, which build it)
        deidentifier.build_all()  # a bad config or model fails here, before any output is touched

    policy = FieldPolicy(frozenset(keep_field), drop_fields)
    if stream:
        run_stdin(
            deidentifier, language, policy, get_patient, encoding, max_bytes, time_limit, allow_failures
        )
        return
    if tables:
        config_digest = hashlib.sha256(config.read_bytes()).hexdigest() if config is not None else None
        columns = [id_column, sorted(text_column), language_column, patient_id, drop_fields, output_format]
        settings = settings_fingerprint(
            {"language": language, "config": config_digest, "overrides": overrides, "columns": columns}, key
        )
        run_tables(args, deidentifier, language, settings, progress, allow_failures)
        return
    assert source is not None and output is not None and get_patient is not None
    options = BatchOptions(
        annotations=annotations,
        jsonl_name=source.name if fmt in (None, "jsonl") and is_jsonl(source) else None,
        resume=resume,
        overwrite=overwrite,
        naming=name_outputs,
        fields=policy,
        time_limit=time_limit,
        durable=fsync,
        workers=0 if workers is None else workers,  # 0: chosen from the cores and the input's size
        memory_limit=memory,
    )
    settings = settings_fingerprint(
        {
            "language": language,
            "config": hashlib.sha256(config.read_bytes()).hexdigest() if config is not None else None,
            "overrides": overrides,
            "format": fmt,
            "naming": name_outputs,
            "fields": [sorted(keep_field), drop_fields],
            "annotations": annotations,
            "patient_id": patient_id,
        },
        key,
    )

    def read_inputs() -> Iterator[InputItem]:
        return iter_inputs(source, fmt, None if language == "auto" else language, encoding, max_bytes, ingest)

    # with patient ids, a first pass collects each patient's names and places (batch/patients.py)
    reread = read_inputs if patient_id else None
    total = count_inputs(source, fmt)
    if progress and (total is None or total > 1):
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("de-identifying", total=total)
            outcome = run_batch(
                read_inputs(),
                deidentifier,
                output,
                key,
                options,
                settings,
                get_patient,
                lambda: bar.advance(task),
                reread,
            )
    else:
        outcome = run_batch(
            read_inputs(), deidentifier, output, key, options, settings, get_patient, None, reread
        )
    d = outcome.summary
    with writing(AUDIT_HTML_NAME):
        write_audit_html(output / AUDIT_HTML_NAME, d["audit"], output / STATE_DIR / TMP_DIR)
    typer.echo(
        f"{d['succeeded']}/{d['documents']} documents de-identified, {d['failed']} failed, "
        f"{d['skipped']} skipped as done, {d['ignored']} inputs ignored; "
        f"{sum(d['spans_per_label'].values())} spans replaced -> {output}"
    )
    if d["spans_per_label"]:
        typer.echo("spans per label: " + json.dumps(d["spans_per_label"]))
    _echo_languages(d["languages"], language)
    finish(
        d,
        outcome.interrupted_by,
        allow_failures,
        unit="document",
        kept="written and recorded",
        failures_listed="listed in summary.json",
    )


def _echo_languages(languages: dict[str, Any], language: str) -> None:
    """Documents per language with ``--language auto``, and how many guesses were uncertain."""
    if language != "auto" or not languages["documents"]:
        return
    typer.echo("documents per language: " + json.dumps(languages["documents"]))
    uncertain = languages["low_confidence"] + languages["undetermined"]
    if uncertain:
        typer.secho(
            f"{uncertain} document(s) of uncertain language ({languages['undetermined']} undetermined, "
            "processed in the default language): listed under warnings in summary.json; pass --language "
            "or a language field for them",
            err=True,
            fg=typer.colors.YELLOW,
        )
