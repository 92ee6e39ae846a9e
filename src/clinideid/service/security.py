"""Authentication, request size limits and the last line of defence against text in logs.

``Guard`` is a plain ASGI middleware: it refuses bodies over the limit (413) before the app reads them, turns
any unexpected exception into a 500 whose log line names the exception type only (its message and
traceback may quote the document), and writes the access log with the route's template in place of the
path (``/v1/jobs/{job_id}``), without the query string: a path or query value a caller chose (an id, a
reviewer's name) never reaches a log line.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from fastapi import HTTPException, Request
from starlette.routing import BaseRoute, Match, Mount

from clinideid.service.tenancy import LOCAL, Caller, Callers

log = logging.getLogger(__name__)
access_log = logging.getLogger("clinideid.service.access")

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


def check_token(request: Request, callers: Callers, tokens_configured: bool) -> Caller:
    """The caller the bearer token stands for (``LOCAL`` for loopback without tokens), or 401/403."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if tokens_configured:
        if scheme.lower() != "bearer" or not token:
            raise HTTPException(401, "missing bearer token", headers={"WWW-Authenticate": "Bearer"})
        caller = callers.match(token.strip())
        if caller is None:
            raise HTTPException(401, "invalid bearer token", headers={"WWW-Authenticate": "Bearer"})
        return caller
    if is_loopback(request.client.host if request.client else None):
        return LOCAL
    raise HTTPException(403, "this server has no API tokens configured and only serves loopback clients")


def route_of(scope: Scope, routes: Sequence[BaseRoute]) -> str:
    """The template of the route that matches ``scope`` (no caller-chosen path segment, no query); call it
    before the app runs (routers change the scope's ``root_path``)."""
    partial = None
    for route in routes:
        if not getattr(route, "path", None):
            continue  # a router included whole: its routes set scope["route"] when they serve
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return _template(route)
        if match is Match.PARTIAL and partial is None:
            partial = route
    return _template(partial) if partial is not None else "{no route}"


def _served(scope: Scope, matched: str) -> str:
    """The API route that served ``scope`` (the router records it), else the template matched before."""
    served = scope.get("route")
    if served is not None and not isinstance(served, Mount) and getattr(served, "path", None):
        return str(served.path)
    return matched


def _template(route: BaseRoute) -> str:
    path = getattr(route, "path", "")
    return f"{path}/{{path}}" if isinstance(route, Mount) else str(path)


def _log_access(scope: Scope, route: str, status: int) -> None:
    client = scope.get("client") or ("-", 0)
    access_log.info(
        '%s:%s - "%s %s HTTP/%s" %s',
        client[0], client[1], scope.get("method"), route, scope.get("http_version", "1.1"), status,
    )  # fmt: skip


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class Guard:
    """Size limit + exception containment around the whole app."""

    def __init__(
        self, app: Callable[..., Awaitable[None]], max_bytes: int, routes: Sequence[BaseRoute] = ()
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.routes = routes  # the application's routes: logs name the route that served a request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        matched = route_of(scope, self.routes)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _send_json(send, 413, {"detail": f"request body over the limit of {self.max_bytes} bytes"})
            _log_access(scope, matched, 413)
            return
        seen = 0
        started = False
        status = 500

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                status = 413
                await _send_json(
                    send, 413, {"detail": f"request body over the limit of {self.max_bytes} bytes"}
                )
        except Exception as exc:  # the message or traceback may quote a document: log the type only
            route = _served(scope, matched)
            log.error("internal error on %s %s: %s", scope.get("method"), route, type(exc).__name__)
            if not started:
                await _send_json(send, 500, {"detail": f"internal error ({type(exc).__name__})"})
        _log_access(scope, _served(scope, matched), status)


class _TooLarge(BaseException):  # not an Exception: request parsers must not swallow it
    pass
