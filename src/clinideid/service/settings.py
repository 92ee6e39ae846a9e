"""What a ``clinideid serve`` instance is allowed to do: key, tokens, limits, folders."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from clinideid.errors import ConfigError

#: environment variable holding API tokens (comma- or newline-separated)
TOKENS_ENV = "CLINIDEID_API_TOKENS"


@dataclass
class ServiceSettings:
    """Server settings. ``key`` never leaves the server: it is in no response and no log.

    With no ``tokens``, only loopback clients are served (a local tool); with tokens, every request needs
    ``Authorization: Bearer <token>``.
    """

    key: bytes | None
    state_dir: Path
    tokens: frozenset[str] = frozenset()
    language: str = "auto"
    max_request_bytes: int = 5_000_000
    max_document_chars: int = 1_000_000
    max_batch_documents: int = 256
    time_limit: float = 60.0  # seconds per request (its work is stopped then)
    workers: int = 2  # worker processes: requests computed at once
    queue: int = 32  # requests waiting beyond those (more get 503)
    input_root: Path | None = None  # server-side folder jobs may read from; None: uploads only
    key_file: Path | None = None  # given to job processes (never to clients)
    extra: dict[str, str] = field(default_factory=dict)
    memory_limit: int | None = None  # bytes a worker may add for one request; None: the default; 0: none

    @property
    def jobs_dir(self) -> Path:
        return self.state_dir / "jobs"

    @property
    def review_db(self) -> Path:
        return self.state_dir / "review.sqlite3"


def load_tokens(path: Path | None = None, env: str | None = None) -> frozenset[str]:
    """Tokens from a file (one per line, ``#`` comments) and from ``$CLINIDEID_API_TOKENS``."""
    tokens: set[str] = set()
    if path is not None:
        try:
            lines = path.read_text("utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
        tokens.update(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))
    raw = os.environ.get(TOKENS_ENV, "") if env is None else env
    tokens.update(t.strip() for t in raw.replace("\n", ",").split(",") if t.strip())
    short = [t for t in tokens if len(t) < 16]
    if short:
        raise ConfigError(
            "API tokens must be at least 16 characters long (make one with `openssl rand -hex 24`)"
        )
    return frozenset(tokens)
