"""Command-line options that several commands share, defined once so they read and behave the same."""

from __future__ import annotations

import typer

EPHEMERAL_KEY = typer.Option(
    False, "--ephemeral-key", help="Use a random one-off key (surrogates not reproducible across runs)."
)
SCOPE = typer.Option(None, "--scope", help="Surrogate scope: document, patient or corpus.")
TIME_LIMIT = typer.Option(
    None,
    "--time-limit",
    help="Seconds one document may take, reading and writing included, before it fails (default 60 + 1 per "
    "5,000 characters, or bytes of a DOCX/PDF/image; 0: none).",
)
MEMORY_LIMIT = typer.Option(
    None,
    "--memory-limit",
    help="Memory (address space) a worker process may add, once its pipeline is loaded, for one document; "
    "more fails that document (e.g. 8G, 512M; default 4G; 0: none).",
)
