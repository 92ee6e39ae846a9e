"""Security headers on every response, and the header values that name a download.

``SecurityHeaders`` is a plain ASGI middleware around the whole app (the guard's own 413 and 500 included):
``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``,
``Cache-Control: no-store`` (every answer but the review page's static files may hold text) and a
``Content-Security-Policy``: ``API_CSP`` (nothing may load, nothing may frame it) unless the route set its own —
``REVIEW_CSP`` for the review page, ``AUDIT_CSP`` for a job's audit page, ``docs_page`` for the API docs.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from fastapi.responses import HTMLResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_NEVER_FRAMED = "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
#: JSON, JSONL, ZIP and error answers: nothing in them may load or run, nobody may frame them
API_CSP = f"default-src 'none'; {_NEVER_FRAMED}"
#: the review page: its own script and style files only, API calls to its own origin. Inline styles are
#: allowed because the audit page it shows in a sandboxed ``srcdoc`` frame inherits this policy and styles
#: its tables and matplotlib plots inline; that frame runs no script and has an opaque origin.
REVIEW_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    f"connect-src 'self'; frame-src 'self'; {_NEVER_FRAMED}"
)
#: a job's audit page opened on its own: sandboxed (opaque origin, no script), inline styles and SVG only
AUDIT_CSP = f"sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; {_NEVER_FRAMED}"
#: the API docs (Swagger UI, ReDoc) load their bundles from the CDN FastAPI uses
_DOCS_CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)

_FIXED = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
#: paths whose answers are files of the package (no data): the browser may cache them
CACHEABLE_PREFIX = "/review/static/"


def docs_page(page: HTMLResponse) -> HTMLResponse:
    """FastAPI's docs page with a policy that admits its CDN bundles and its own inline script (by hash)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(m.encode()).digest()).decode() + "'"
        for m in _INLINE_SCRIPT.findall(page.body.decode())
    )
    page.headers["content-security-policy"] = (
        f"default-src 'none'; script-src {_DOCS_CDN} {hashes}; style-src {_DOCS_CDN} https://fonts.googleapis.com "
        f"'unsafe-inline'; font-src https://fonts.gstatic.com; img-src 'self' data: https:; connect-src 'self'; "
        f"worker-src blob:; {_NEVER_FRAMED}"
    )
    return page


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` value (RFC 6266): an ASCII ``filename`` and the exact one in ``filename*``."""
    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", filename) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


class SecurityHeaders:
    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cacheable = str(scope.get("path", "")).startswith(CACHEABLE_PREFIX)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in _FIXED if k not in present]
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", API_CSP.encode()))
                if not cacheable and b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
