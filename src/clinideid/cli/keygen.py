"""``clinideid keygen``: create a secret key file for keyed surrogates, hashes and date shifts."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app


@app.command(
    epilog="Example: clinideid keygen secret.key && clinideid deid notes/ -o safe/ --key-file secret.key"
)
def keygen(
    path: Path = typer.Argument(
        ..., help="Where to write the key (hex text, file mode 0600; never overwritten)."
    ),
    n_bytes: int = typer.Option(32, "--bytes", min=16, help="Key length in bytes (at least 16)."),
) -> None:
    """Write a new random secret key. Keep it secret: whoever holds it can link surrogates to originals."""
    from clinideid.transform.keys import generate_key, save_key

    save_key(path, generate_key(n_bytes))
    typer.echo(f"wrote a {n_bytes}-byte key to {path}")
