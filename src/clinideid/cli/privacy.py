"""Privacy commands: ``pseudonymize-corpus``, ``privacy-train``, ``privacy-release``, ``privacy-audit``."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app, options
from clinideid.cli.convert import parse_options
from clinideid.errors import ConfigError
from clinideid.formats import ReadReport, available_formats, get_codec, read_corpus

FORMATS_HELP = ", ".join(available_formats())


def _key(key_file: Path | None, ephemeral: bool) -> bytes:
    from clinideid.transform.keys import ephemeral_key, load_key

    if (key_file is None) == (not ephemeral):
        raise ConfigError("give exactly one of --key-file PATH or --ephemeral-key")
    return load_key(key_file) if key_file is not None else ephemeral_key()


@app.command(
    "pseudonymize-corpus",
    epilog=(
        "Example: clinideid pseudonymize-corpus corpora/meddocan/train -o train_pseudo --from-format brat "
        "--to-format jsonl --key-file secret.key --label-scheme meddocan --language es"
    ),
)
def pseudonymize_corpus(
    source: Path = typer.Argument(..., help="Annotated corpus (file or folder, depending on the format)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output corpus (must not exist yet)."),
    from_format: str = typer.Option("jsonl", "--from-format", help=f"Input format: {FORMATS_HELP}."),
    to_format: str | None = typer.Option(None, "--to-format", help="Output format (default: the input's)."),
    key_file: Path | None = typer.Option(None, "--key-file", help="Secret key deciding the surrogates."),
    ephemeral_key: bool = options.EPHEMERAL_KEY,
    scope: str = typer.Option("document", "--scope", help="Surrogate scope: document, patient or corpus."),
    label_scheme: str | None = typer.Option(
        None, "--label-scheme", help="Mapping of the corpus labels to canonical ones (e.g. meddocan)."
    ),
    language: str | None = typer.Option(
        None, "--language", "-l", help="Surrogate language (default: each document's, else en)."
    ),
    on_error: str = typer.Option(
        "skip", "--on-error", help="skip: report a failing document and go on; raise."
    ),
    report_path: Path | None = typer.Option(
        None, "--report", help="Write a JSON report (counts, failed ids)."
    ),
    write_option: list[str] = typer.Option([], "--write-option", help="Codec write option KEY=VALUE."),
) -> None:
    """Replace every gold span of an annotated corpus by a keyed surrogate, moving the annotations along.

    The new corpus keeps the labels; each document is verified (the text outside spans is unchanged and
    each span covers its surrogate). Failing documents are listed by id, never by text.
    """
    from clinideid.privacy.io import write_corpus_atomic, write_json_atomic
    from clinideid.privacy.pseudonymize import Pseudonymizer, PseudonymizeReport

    to_format = to_format or from_format
    get_codec(from_format), get_codec(to_format)
    write_opts = parse_options(write_option, "--write-option")
    key = _key(key_file, ephemeral_key)
    pseudo = Pseudonymizer(key, scope=scope, label_scheme=label_scheme, language=language)
    read_report = ReadReport()
    docs = read_corpus(source, from_format, report=read_report, on_error=on_error)
    report = PseudonymizeReport()
    new_docs = list(pseudo.corpus(docs, report, on_error=on_error))
    write_corpus_atomic(new_docs, out, to_format, **write_opts)
    if report_path is not None:
        write_json_atomic(report.to_dict(), report_path)
    typer.echo(
        f"pseudonymised {report.documents} documents, {report.spans} spans "
        f"({report.fallbacks} fell back to a tag) -> {out}"
    )
    for doc_id, reason in report.failures:
        typer.secho(f"skipped: {reason}", err=True, fg=typer.colors.YELLOW)
        del doc_id
    if report.failures:
        raise typer.Exit(3)
