"""Authentication, request size limits and the last line of defence against text in logs.

``guard`` is a plain ASGI middleware: it refuses bodies over the limit (413) before the app reads them and
turns any unexpected exception into a 500 whose log line names the exception type only (its message and
traceback may quote the document).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import HTTPException, Request

from clinideid.service.settings import ServiceSettings

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: paths served without a token (liveness probes, the API description)
PUBLIC_PATHS = frozenset({"/health", "/ready"})


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_token(request: Request, settings: ServiceSettings) -> str:
    """The caller's identity (``token:<prefix>`` or ``loopback``), or 401/403."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if settings.tokens:
        if scheme.lower() != "bearer" or not token:
            raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
        for known in settings.tokens:
            if hmac.compare_digest(known.encode(), token.strip().encode()):
                return f"token:{known[:4]}…"
        raise HTTPException(401, "invalid bearer token", headers={"WWW-Authenticate": "Bearer"})
    if is_loopback(request.client.host if request.client else None):
        return "loopback"
    raise HTTPException(403, "this server has no API tokens configured and only serves loopback clients")


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class Guard:
    """Size limit + exception containment around the whole app."""

    def __init__(self, app: Callable[..., Awaitable[None]], max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _send_json(send, 413, {"detail": f"request body over the limit of {self.max_bytes} bytes"})
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _send_json(
                    send, 413, {"detail": f"request body over the limit of {self.max_bytes} bytes"}
                )
        except Exception as exc:  # the message or traceback may quote a document: log the type only
            log.error(
                "internal error on %s %s: %s", scope.get("method"), scope.get("path"), type(exc).__name__
            )
            if not started:
                await _send_json(send, 500, {"detail": f"internal error ({type(exc).__name__})"})


class _TooLarge(BaseException):  # not an Exception: request parsers must not swallow it
    pass
