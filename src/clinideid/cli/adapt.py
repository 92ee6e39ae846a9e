"""``clinideid adapt``: adapt a language's pipeline to a site's own unlabelled notes."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from clinideid.cli import app


@app.command(
    epilog=(
        "Examples: clinideid adapt notes/ --language it -o adapted/ | "
        "clinideid adapt notes.jsonl -l de -o adapted/ --synthetic 500 --time-budget 20 | "
        "clinideid adapt notes/ -l en -o adapted/ --model neural --semi charlm --epochs 5 | "
        "then: clinideid deid notes/ --config adapted/pipeline.yaml -o out/ --key-file secret.key"
    ),
)
def adapt(
    notes: Path = typer.Argument(..., help="The site's notes: a folder of .txt files or a JSONL file."),
    language: str = typer.Option(..., "--language", "-l", help="Language code: de, en, es, fr, it, ru."),
    output: Path = typer.Option(
        ..., "--output", "-o", help="Output folder (pipeline.yaml, model/, adapt.json)."
    ),
    synthetic: int = typer.Option(1000, "--synthetic", min=0, help="Synthetic annotated notes to add."),
    seed: int = typer.Option(0, "--seed", help="Random seed (synthetic notes, held-back split)."),
    time_budget: float | None = typer.Option(
        None,
        "--time-budget",
        help="Minutes for training: crf, fewer grid points when short; neural, bounds the LM pre-training "
        "(a share of it) and adapt.json says whether the tagger's epochs fitted.",
    ),
    max_site_notes: int = typer.Option(
        2000,
        "--max-site-notes",
        min=1,
        help="Site notes (a seeded sample of all, which are all silver-labelled) the model is trained and "
        "chosen on: bounds training time and memory.",
    ),
    model: str = typer.Option("crf", "--model", help="Learned model: crf (default) or neural."),
    semi: str = typer.Option(
        "charlm",
        "--semi",
        help="--model neural: how the site's unlabelled text is used: charlm (character LMs pre-trained on "
        "it, as embeddings) or cvt (Cross-View Training on it).",
    ),
    epochs: int = typer.Option(5, "--epochs", min=1, help="--model neural: tagger epochs."),
    lm_chars: int = typer.Option(
        2_000_000,
        "--lm-chars",
        min=1000,
        help="--model neural: site characters read by the LMs or by CVT (bounds time and memory).",
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue a run in OUTPUT, skipping finished steps."),
) -> None:
    """Silver-label the notes with the default pipeline, train a CRF (rule features) or a semi-supervised
    neural tagger on them plus synthetic notes, choose rules / model / union per label on a held-back part,
    and write a pipeline config.

    No note text is printed or put in adapt.json; OUTPUT/work holds the notes' text: delete it when done.
    """
    from clinideid.adapt import AdaptOptions
    from clinideid.adapt import adapt as run_adapt

    opts = AdaptOptions(
        notes=notes,
        language=language,
        out=output,
        synthetic=synthetic,
        seed=seed,
        time_budget_minutes=time_budget,
        resume=resume,
        max_site_notes=max_site_notes,
        model=model,
        semi=semi,
        epochs=epochs,
        lm_chars=lm_chars,
    )
    report = run_adapt(opts, progress=lambda msg: typer.echo(f"adapt {msg}", err=True))
    choices = ", ".join(f"{label}={v['choice']}" for label, v in report["per_label"].items())
    typer.echo(json.dumps({"pipeline": str(output / "pipeline.yaml"), "per_label": choices}))
