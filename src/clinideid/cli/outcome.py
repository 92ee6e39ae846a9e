"""How a batch command ends: the failed documents listed, then the exit code a script can act on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import typer

from clinideid.batch.runner import EXIT_DOCUMENTS_FAILED, EXIT_INTERRUPTED


def finish(
    summary: Mapping[str, Any],
    interrupted_by: str | None,
    allow_failures: bool,
    *,
    unit: str,
    kept: str,
    failures_listed: str,
) -> None:
    """Print up to 20 failures, then exit 130 (stopped: finish with ``--resume``) or 3 (some ``unit``s
    failed, unless ``allow_failures``); return normally when everything was done."""
    for err in summary["errors"][:20]:
        typer.secho(f"  failed {err['id']}: {err['error']}", err=True, fg=typer.colors.YELLOW)
    if interrupted_by:
        typer.secho(
            f"stopped by {interrupted_by}: the {unit}s finished so far are {kept}; run the same command "
            "with --resume to finish",
            err=True,
            fg=typer.colors.RED,
        )
        raise typer.Exit(EXIT_INTERRUPTED)
    if summary["failed"] and not allow_failures:
        typer.secho(
            f"{summary['failed']} {unit}(s) failed ({failures_listed}); exit code {EXIT_DOCUMENTS_FAILED}",
            err=True,
            fg=typer.colors.YELLOW,
        )
        raise typer.Exit(EXIT_DOCUMENTS_FAILED)
