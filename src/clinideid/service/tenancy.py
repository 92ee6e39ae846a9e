"""Who owns what: every job and review document belongs to the tenant that created it.

A caller is the tenant its token acts for: a named tenant (``tenant=NAME`` in the token file) or, for a bare
token, a tenant of its own named by a keyed hash of the token (HMAC-SHA256 with a secret kept in the state
folder), so the raw token is never stored. Other tenants get 404 for what a tenant owns, exactly as for what
does not exist. Admin tokens see every tenant's jobs and documents, and those stored before owners were
recorded (which have none); what an admin creates belongs to the admin's own tenant. Without tokens, every
loopback client is the one local user, an admin.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from fastapi import Request

from clinideid.service.settings import ServiceSettings

#: the secret that keys the owner names of bare tokens (in the state folder, owner-only permissions)
SECRET_NAME = "owner.key"


@dataclass(frozen=True)
class Caller:
    """``owner`` is what is stored with what this caller creates (``tenant:NAME``, ``token:HASH``, ``local``)."""

    owner: str
    admin: bool = False

    def sees(self, owner: str | None) -> bool:
        """Whether this caller may read what ``owner`` owns (``None``: stored before owners; admins only)."""
        return self.admin or (owner is not None and hmac.compare_digest(owner, self.owner))


#: the local user of a server without tokens, and of the command line
LOCAL = Caller("local", admin=True)


def owner_secret(state_dir: Path) -> bytes:
    """The state folder's owner secret, made on first use (never sent out, never logged)."""
    path = state_dir / SECRET_NAME
    if not path.exists():
        tmp = state_dir / f".{SECRET_NAME}.{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        try:
            os.link(tmp, path)  # atomic and exclusive: two servers starting at once agree on one secret
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_bytes()


class Callers:
    """The callers the configured tokens stand for."""

    def __init__(self, settings: ServiceSettings) -> None:
        secret = owner_secret(settings.state_dir) if settings.tokens else b""
        self._callers: list[tuple[bytes, Caller]] = []
        for token in sorted(settings.tokens):
            name = settings.tenants.get(token)
            owner = (
                f"tenant:{name}"
                if name
                else "token:" + hmac.new(secret, token.encode(), hashlib.sha256).hexdigest()[:32]
            )
            self._callers.append((token.encode(), Caller(owner, token in settings.admin_tokens)))

    def match(self, token: str) -> Caller | None:
        found = None
        for known, caller in self._callers:  # every entry is compared: no early exit to time
            if hmac.compare_digest(known, token.encode()):
                found = caller
        return found


def caller_of(request: Request) -> Caller:
    """The caller that ``require_caller`` (a dependency of every protected route) authenticated."""
    return request.state.caller
