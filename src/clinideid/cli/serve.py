"""``clinideid serve``: the REST API and review page (extra ``service``) with uvicorn."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import typer

from clinideid.cli import app, options
from clinideid.errors import ConfigError

log = logging.getLogger(__name__)


def _log_config() -> dict:
    """uvicorn's logging, with the service's own access log (route templates, no query) in place of its own."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"]["service_access"] = {
        "formatter": "default", "class": "logging.StreamHandler", "stream": "ext://sys.stdout"
    }  # fmt: skip
    config["loggers"]["clinideid.service"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    config["loggers"]["clinideid.service.access"] = {
        "handlers": ["service_access"], "level": "INFO", "propagate": False
    }  # fmt: skip
    return config


@app.command(
    epilog=(
        "Example: clinideid serve --key-file secret.key --tokens-file tokens.txt --host 0.0.0.0 --port 8080 "
        "(then open http://HOST:8080/review, API docs at /docs)"
    )
)
def serve(
    key_file: Path | None = typer.Option(
        None, "--key-file", help="Secret key for surrogates (never sent out)."
    ),
    ephemeral_key: bool = options.EPHEMERAL_KEY,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    tokens_file: Path | None = typer.Option(
        None,
        "--tokens-file",
        help="Bearer tokens, one per line (also $CLINIDEID_API_TOKENS), each optionally followed by "
        "tenant=NAME (tokens of one tenant share its jobs and review documents) and admin (sees every "
        "tenant's). A bare token is a tenant of its own. Without any, only loopback clients are served.",
    ),
    state_dir: Path = typer.Option(
        Path("clinideid-service"), "--state-dir", help="Jobs, the review database and the job key live here."
    ),
    input_root: Path | None = typer.Option(
        None, "--input-root", help="Folder whose JSONL files jobs may name by path (default: uploads only)."
    ),
    language: str = typer.Option("auto", "--language", "-l", help="Default language (or auto)."),
    max_request_bytes: int = typer.Option(5_000_000, "--max-request-bytes", min=1024),
    time_limit: float = typer.Option(
        60.0, "--time-limit", min=0.1, help="Seconds one request may compute (then 504, and its work stops)."
    ),
    workers: int = typer.Option(2, "--workers", min=1, help="Worker processes: requests computed at once."),
    memory_limit: str | None = options.MEMORY_LIMIT,
) -> None:
    """Serve the REST API (/v1, Presidio-compatible /analyze and /anonymize) and the review page."""
    from clinideid.batch.limits import parse_size
    from clinideid.cli.deid import _load_key
    from clinideid.service.settings import ServiceSettings, load_access

    try:
        import uvicorn

        from clinideid.service import create_app
    except ModuleNotFoundError as exc:
        from clinideid.extras import missing_extra

        raise missing_extra(exc, "clinideid serve") or exc from None
    key = _load_key(key_file, ephemeral_key)
    if key is None:
        raise ConfigError("clinideid serve needs --key-file (or --ephemeral-key for a throw-away server)")
    access = load_access(tokens_file)
    from clinideid.service.security import is_loopback

    if not access.tokens and not is_loopback(host):
        log.warning("no API tokens configured: only loopback clients will be served")
    settings = ServiceSettings(
        key=key,
        state_dir=state_dir,
        tokens=access.tokens,
        tenants=access.tenants,
        admin_tokens=access.admin_tokens,
        language=language,
        max_request_bytes=max_request_bytes,
        time_limit=time_limit,
        workers=workers,
        memory_limit=None if memory_limit is None else parse_size(memory_limit, "--memory-limit"),
        input_root=input_root,
        key_file=key_file,
    )
    # access log lines hold the method, the route's template and the status (no body, no caller's value)
    uvicorn.run(create_app(settings), host=host, port=port, log_config=_log_config(), access_log=False)
