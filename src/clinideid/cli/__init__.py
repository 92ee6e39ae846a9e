"""The ``clinideid`` command: one Typer app, one module per subcommand."""

from __future__ import annotations

import logging
import sys

import typer

from clinideid.errors import ClinideidError

app = typer.Typer(
    name="clinideid",
    help="De-identify clinical text, convert and evaluate annotated corpora.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress (never document text).")):
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )


def _register_commands() -> None:
    from clinideid.cli import (  # noqa: F401  (each registers itself)
        adapt,
        agreement,
        convert,
        deid,
        embeddings,
        evaluate,
        keygen,
        pretrain_lm,
        privacy,
        serve,
        spark,
        stats,
        synth,
        train,
    )


def main(argv: list[str] | None = None) -> None:
    """Console entry point: clear one-line errors instead of tracebacks for known problems (exit 2, or the
    error's own code: 4 when outputs could not be written).

    Click (in standalone mode) handles usage errors itself; our own errors propagate to here.
    """
    _register_commands()
    try:
        app(args=argv, prog_name="clinideid")
    except ClinideidError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(exc.exit_code)
    except ModuleNotFoundError as exc:  # an optional dependency (torch, transformers, gensim) not installed
        from clinideid.extras import missing_extra

        error = missing_extra(exc, "this command")
        if error is None:
            raise
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        sys.exit(2)
