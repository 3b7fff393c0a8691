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

And what every answer carries (SecurityHeaders, outermost: refusals too): a
Content-Security-Policy that runs the app's own scripts only (no inline script, nothing from
elsewhere) and lets only the app itself frame a page (`frame-ancestors 'self'`),
`X-Content-Type-Options: nosniff` (a run file is never sniffed into HTML),
`Referrer-Policy: same-origin` (a sign-in link in the address bar never leaks to another
site; not no-referrer, under which a browser's form POST says `Origin: null` and the
sign-in page's origin check refuses it) and
`X-Frame-Options: SAMEORIGIN` for browsers without frame-ancestors. A run file (the
candidate's HTML, its evidence) is the candidate's content, not the app's: RUN_FILE_CSP
sandboxes it (no `allow-same-origin`: it runs, if at all, in an origin of its own, without
the reviewer's session) and the route serves active types as a download.
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
APP_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "media-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
# a run file: no script, no plugin, no network but the app's own images and media, sandboxed
RUN_FILE_CSP = (
    "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; "
    "sandbox; frame-ancestors 'self'"
)
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"SAMEORIGIN"),
)


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


# what a browser runs as a document (or as script) when it opens the file: served as a download
ACTIVE_TYPES = ("text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml")


def run_file_headers(mime: str, extra: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The headers of a served run file: sandboxed (RUN_FILE_CSP), no name (the file's name
    may carry the label), and a download when the browser would run it (ACTIVE_TYPES, any
    script type)."""
    base = mime.split(";")[0].strip().lower()
    active = base in ACTIVE_TYPES or "javascript" in base or "ecmascript" in base
    return {
        "content-security-policy": RUN_FILE_CSP,
        "content-disposition": "attachment" if active else "inline",
        **(extra or {}),
    }


class SecurityHeaders:
    """ASGI middleware: the security headers on every answer (see the module doc); a route
    that sets its own Content-Security-Policy (a run file's, stricter) keeps it."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                headers = [(k, v) for k, v in msg.get("headers", []) if k.lower() not in dict(SECURITY_HEADERS)]
                if not any(k.lower() == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", APP_CSP.encode()))
                msg = {**msg, "headers": headers + list(SECURITY_HEADERS)}
            await send(msg)

        await self.app(scope, receive, with_headers)


def _refuse(scope: Scope, exc: HTTPException):
    if scope.get("path", "").startswith("/api/"):
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
    return PlainTextResponse(exc.detail, status_code=exc.status_code)


def install(app: FastAPI, hosts: Iterable[str], max_body: int = MAX_BODY_BYTES) -> None:
    """Add the guards to the app: the security headers outermost, then the Host check
    (nothing else runs for a refused Host), then the body cap."""

    @app.exception_handler(BodyTooLarge)
    async def _too_large(request: Request, exc: BodyTooLarge):
        return _refuse(request.scope, exc)

    app.add_middleware(BodyLimit, limit=max_body)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts), www_redirect=False)
    app.add_middleware(SecurityHeaders)  # outermost: a refused Host's 400 carries them too
