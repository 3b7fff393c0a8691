"""What the review app refuses before any route runs:

- a Host header not on the allow-list → 400. A hostile web page can make a reviewer's
  browser talk to the app on loopback by DNS rebinding (its own name, re-pointed at
  127.0.0.1); the browser then sends that name as Host, and the allow-list refuses it.
  Loopback names are allowed by default, plus the host the app is bound to and any
  `--allow-host` name (the server's name on a team's network). Starlette's maintained
  TrustedHostMiddleware does the check.
- a request body over the cap (default 1 MiB; the largest real submission, 20 items with
  comments, is a few kB) → 413, by the declared Content-Length before anything is read, or
  while reading a body sent without one (chunked), so nothing large is ever parsed.
- a file number that is not a stored file's (not digits, or beyond a database integer) → 404,
  like any unknown file, never a 500.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Optional

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skycity_bench.store.validate import InvalidReview

MAX_BODY_BYTES = 1 << 20  # 1 MiB for any request body (JSON API and forms alike)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ANY_ADDRESS = ("0.0.0.0", "::", "")
MAX_FILE_ID = 2**63 - 1  # the largest integer SQLite and Postgres (bigint) hold


def allowed_hosts(bind_host: Optional[str] = None, extra: Iterable[str] = ()) -> list[str]:
    """The Host names the app answers to: loopback, the bind address when it names one
    host (not 0.0.0.0 / ::), and the extra names given (as typed: a name or an address)."""
    out = list(LOOPBACK_HOSTS)
    for h in ([bind_host] if bind_host not in ANY_ADDRESS else []) + [str(e).strip() for e in extra]:
        if not h:
            continue
        h = h.lower()
        try:
            if isinstance(ipaddress.ip_address(h.strip("[]")), ipaddress.IPv6Address):
                h = f"[{h.strip('[]')}]"  # a Host header writes an IPv6 address in brackets
        except ValueError:
            pass
        if h not in out:
            out.append(h)
    return out


def file_number(raw: str) -> int:
    """A /files/{n} path segment as a file number; anything else is an unknown file (404)."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 19 or not 0 < int(raw) <= MAX_FILE_ID:
        raise InvalidReview("no such file", 404)
    return int(raw)


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int):
        super().__init__(413, f"request body over {limit} bytes ({limit / 1048576:g} MiB): refused, nothing stored")


class BodyLimit:
    """ASGI middleware: 413 for a body over `limit` bytes (declared or counted)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _refuse(scope, BodyTooLarge(self.limit))(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)  # handled by the app (see install)
            return msg

        await self.app(scope, counted, send)


def _refuse(scope: Scope, exc: HTTPException):
    if scope.get("path", "").startswith("/api/"):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    return PlainTextResponse(exc.detail, status_code=exc.status_code)


def install(app: FastAPI, hosts: Iterable[str], max_body: int = MAX_BODY_BYTES) -> None:
    """Add the guards to the app: the Host check outermost (nothing else runs for a refused
    Host), then the body cap."""

    @app.exception_handler(BodyTooLarge)
    async def _too_large(request: Request, exc: BodyTooLarge):
        return _refuse(request.scope, exc)

    app.add_middleware(BodyLimit, limit=max_body)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts), www_redirect=False)
