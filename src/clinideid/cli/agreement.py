"""``clinideid agreement``: inter-annotator agreement between reviewers (review database or exports)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from clinideid.cli import app
from clinideid.errors import ConfigError, InputError


def _read_exports(files: list[Path]) -> tuple[dict, dict]:
    """``{reviewer: {doc: spans}}`` and texts from JSONL exports (``reviewer`` field, else the file stem)."""
    annotations: dict[str, dict[str, list[tuple[int, int, str]]]] = {}
    texts: dict[str, str] = {}
    for path in files:
        try:
            lines = path.read_text("utf-8").splitlines()
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                reviewer = str(rec.get("reviewer") or path.stem)
                spans = [(int(s["start"]), int(s["end"]), str(s["label"])) for s in rec.get("spans", ())]
                doc_id, text = str(rec["id"]), str(rec["text"])
            except (ValueError, KeyError, TypeError):
                raise InputError(f"{path}, line {n}: not a review export record (id, text, spans)") from None
            if texts.setdefault(doc_id, text) != text:
                raise InputError(f"{path}, line {n}: document {doc_id!r} has another text in another file")
            annotations.setdefault(reviewer, {})[doc_id] = spans
    return annotations, texts


@app.command(
    epilog=(
        "Examples: clinideid agreement --review-db clinideid-service/review.sqlite3 | "
        "clinideid agreement review-ann.jsonl review-bob.jsonl --json iaa.json"
    )
)
def agreement(
    exports: list[Path] = typer.Argument(None, help="Reviewers' JSONL exports (from the review page)."),
    review_db: Path | None = typer.Option(None, "--review-db", help="The review page's SQLite database."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Agreement between reviewers: observed agreement and Krippendorff's alpha over tokens, pairwise entity F1."""
    from clinideid.evaluate.agreement import agreement as compute

    if bool(exports) == (review_db is not None):
        raise ConfigError("give either reviewers' JSONL exports or --review-db")
    if review_db is not None:
        if not review_db.is_file():
            raise InputError(f"no review database at {review_db}")
        from clinideid.service.review.db import ReviewStore
        from clinideid.service.review.routes import review_agreement
        from clinideid.service.tenancy import LOCAL

        report = review_agreement(ReviewStore(review_db), LOCAL)  # the command line sees every tenant
    else:
        report = compute(*_read_exports(exports))
    typer.echo(
        f"{len(report['reviewers'])} reviewers, {report['documents']} documents annotated by two or more: "
        f"observed agreement {report['observed_agreement']}, Krippendorff's alpha {report['krippendorff_alpha']}"
    )
    for pair in report["pairs"]:
        a, b = pair["reviewers"]
        typer.echo(f"  {a} / {b}: observed {pair['observed_agreement']}, entity F1 {pair['entity_f1']}")
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
