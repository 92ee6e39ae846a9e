"""What a ``clinideid serve`` instance is allowed to do: key, tokens and their tenants, limits, folders."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clinideid.errors import ConfigError

#: environment variable holding API tokens (comma- or newline-separated entries, each as a token file line)
TOKENS_ENV = "CLINIDEID_API_TOKENS"
#: a tenant name: letters, digits, ``.``, ``_``, ``-`` (it is stored with what the tenant creates)
TENANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MIN_TOKEN_CHARS = 16


@dataclass
class ServiceSettings:
    """Server settings. ``key`` never leaves the server: it is in no response and no log.

    With no ``tokens``, only loopback clients are served (a local tool with one user, who is an admin);
    with tokens, every request needs ``Authorization: Bearer <token>``. Each token is its own tenant unless
    ``tenants`` maps it to a named one (tokens naming one tenant share its jobs and review documents);
    ``admin_tokens`` may read, list, cancel and export what every tenant owns.
    """

    key: bytes | None
    state_dir: Path
    tokens: frozenset[str] = frozenset()
    tenants: Mapping[str, str] = field(default_factory=dict)  # token -> tenant name
    admin_tokens: frozenset[str] = frozenset()
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

    def __post_init__(self) -> None:
        # messages never quote a token
        if not set(self.tenants) <= self.tokens or not self.admin_tokens <= self.tokens:
            raise ConfigError("tenants and admin_tokens may only name tokens that are in `tokens`")
        if any(not TENANT_NAME.fullmatch(name) for name in self.tenants.values()):
            raise ConfigError(
                "a tenant name may hold only letters, digits, '.', '_' and '-' (at most 64 characters)"
            )

    @property
    def jobs_dir(self) -> Path:
        return self.state_dir / "jobs"

    @property
    def review_db(self) -> Path:
        return self.state_dir / "review.sqlite3"


@dataclass(frozen=True)
class Access:
    """Tokens with their tenant and role, as ``load_access`` reads them."""

    tokens: frozenset[str] = frozenset()
    tenants: Mapping[str, str] = field(default_factory=dict)
    admin_tokens: frozenset[str] = frozenset()


def _parse_entry(entry: str, where: str, tenants: dict[str, str], admins: set[str]) -> str:
    """``TOKEN [tenant=NAME] [admin]`` -> the token (its tenant and role recorded). Errors never quote it."""
    token, *fields = entry.split()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{where}: API tokens must be at least {MIN_TOKEN_CHARS} characters long "
            "(make one with `openssl rand -hex 24`)"
        )
    for item in fields:
        name, sep, value = item.partition("=")
        if item == "admin":
            admins.add(token)
        elif sep and name == "tenant" and TENANT_NAME.fullmatch(value):
            if tenants.setdefault(token, value) != value:
                raise ConfigError(f"{where}: the token is given again with another tenant")
        else:
            raise ConfigError(
                f"{where}: after the token, only `tenant=NAME` (letters, digits, '.', '_', '-') and `admin` "
                "may follow"
            )
    return token


def load_access(path: Path | None = None, env: str | None = None) -> Access:
    """Tokens from a file and from ``$CLINIDEID_API_TOKENS``.

    A file has one token per line (``#`` starts a comment line); the environment variable separates entries
    with commas or newlines. An entry is the token, optionally followed by ``tenant=NAME`` (the token acts
    for that tenant) and ``admin`` (the token sees every tenant's jobs and review documents), e.g.
    ``3f0c...e9 tenant=cardiology admin``. A bare token is a tenant of its own.
    """
    tokens: set[str] = set()
    tenants: dict[str, str] = {}
    admins: set[str] = set()
    if path is not None:
        try:
            lines = path.read_text("utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
        for number, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                tokens.add(_parse_entry(line, f"line {number} of the token file", tenants, admins))
    raw = os.environ.get(TOKENS_ENV, "") if env is None else env
    entries = [e for e in raw.replace("\n", ",").split(",") if e.strip()]
    for number, entry in enumerate(entries, 1):
        tokens.add(_parse_entry(entry, f"entry {number} of ${TOKENS_ENV}", tenants, admins))
    return Access(frozenset(tokens), tenants, frozenset(admins))
