"""``clinideid synth``: write a corpus of synthetic clinical notes with gold PHI spans."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app
from clinideid.errors import ConfigError
from clinideid.formats import available_formats, get_codec, write_corpus


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def output_path(output: str, fmt: str, languages: list[str], seed: int) -> Path:
    """The corpus path: ``output`` itself, or a file named after the request inside the folder ``output``
    (when it is one, or ends with a slash) for single-file formats."""
    path = Path(output)
    if get_codec(fmt).folder:
        return path
    if path.is_dir() or output.endswith(("/", "\\")):
        suffix = ".jsonl" if fmt == "jsonl" else f".{fmt}"
        return path / f"synth-{'-'.join(languages)}-seed{seed}{suffix}"
    return path


@app.command(
    epilog=(
        "Examples: clinideid synth --language it --count 200 --seed 7 -o out/ | "
        "clinideid synth --language de,ru --count 50 --styles ocr,telegraphic --types ed -o notes.jsonl | "
        "clinideid synth --language fr --count 20 -o brat_out --format brat"
    ),
)
def synth(
    language: str = typer.Option(
        ..., "--language", "-l", help="Language code(s), comma-separated: de, en, es, fr, it, ru."
    ),
    count: int = typer.Option(100, "--count", "-n", min=1, help="Notes per language."),
    seed: int = typer.Option(0, "--seed", help="Random seed: the same seed gives the same corpus."),
    output: str = typer.Option(
        ..., "--output", "-o", help="Output file, or folder (a file is named inside)."
    ),
    fmt: str = typer.Option(
        "jsonl", "--format", "-f", help="Corpus format: " + ", ".join(available_formats())
    ),
    styles: str | None = typer.Option(
        None,
        "--styles",
        help="Only these styles, comma-separated: normal, upper, lower, telegraphic, nospace, tokens, ocr.",
    ),
    types: str | None = typer.Option(
        None,
        "--types",
        help="Only these document types, comma-separated: discharge, progress, report, referral, form, ed.",
    ),
) -> None:
    """Generate synthetic clinical notes (the project's own templates, fictitious values) with gold PHI spans.

    Each document's metadata says its type, style and seed. Useful to train a detector for a language without
    an annotated corpus, or to test a pipeline.
    """
    from clinideid.synth import generate_notes
    from clinideid.synth.generator import profile_for

    languages = _split(language) or []
    if not languages:
        raise ConfigError("--language needs at least one code, e.g. --language it")
    languages = [profile_for(lang).code for lang in languages]
    style_list, type_list = _split(styles), _split(types)
    docs = [
        note.document
        for lang in languages
        for note in generate_notes(lang, count, seed, types=type_list, styles=style_list)
    ]
    target = output_path(output, fmt, languages, seed)
    if not get_codec(fmt).folder:
        target.parent.mkdir(parents=True, exist_ok=True)
    write_corpus(docs, target, fmt)
    n_spans = sum(len(d.spans) for d in docs)
    typer.echo(f"wrote {len(docs)} synthetic notes ({n_spans} gold spans) to {target} ({fmt})")
