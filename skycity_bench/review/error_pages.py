"""How the review app answers a refusal: JSON (`{"error": ...}`) under /api/ and for the
OpenAPI document, a page (error.html) or a redirect to the sign-in page elsewhere.

- InvalidReview (bad input, unknown candidate, a finalised sheet): its own status;
- NotSignedIn: 401 with WWW-Authenticate: Bearer and a JSON error on the API and on any
  request that sent a bearer token (a bad or expired token on a page is a 401 too: a
  redirect to / would meet the same token there and loop), a redirect to / on a page;
- Forbidden and NoRule (a reviewer on an admin route, a route without a role rule): 403;
- a request FastAPI cannot validate: 422 with the first problem, and a body that names an
  account anywhere (`reviewer`, `by`, at any depth) is told that the reviewer is the
  signed-in account (review/strict.py).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException
from starlette.responses import Response

from skycity_bench.review.auth import Forbidden, NoRule, NotSignedIn
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.strict import NAMES_SOMEONE, NOT_THE_BODY
from skycity_bench.store.validate import InvalidReview


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def _detail(exc: Exception) -> str:
    return str(exc.detail) if isinstance(exc, HTTPException) else str(exc)


def _status(exc: Exception) -> int:
    return exc.status if isinstance(exc, InvalidReview) else 403


def install(app: FastAPI, ctx: ReviewContext) -> None:
    """Register the app's error answers (see the module doc)."""

    async def refused(request: Request, exc: Exception) -> Response:
        """InvalidReview (its status), Forbidden and NoRule (403)."""
        message, status = _detail(exc), _status(exc)
        if is_api(request):
            return JSONResponse({"error": message}, status_code=status)
        return ctx.page(request, "error.html", {"message": message}, status)

    async def not_signed_in(request: Request, exc: Exception) -> Response:
        if is_api(request) or request.headers.get("authorization"):
            return JSONResponse({"error": _detail(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return RedirectResponse("/", status_code=303)

    async def bad_request(request: Request, exc: Exception) -> Response:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        msg = first.get("msg", "invalid request")
        if first.get("type") == "extra_forbidden" and str((first.get("loc") or ("",))[-1]) in NAMES_SOMEONE:
            msg = NOT_THE_BODY
        return JSONResponse({"error": f"{where}: {msg}"}, status_code=422)

    for exc_class in (InvalidReview, Forbidden, NoRule):
        app.add_exception_handler(exc_class, refused)
    app.add_exception_handler(NotSignedIn, not_signed_in)
    app.add_exception_handler(RequestValidationError, bad_request)


__all__ = ["install", "is_api"]
