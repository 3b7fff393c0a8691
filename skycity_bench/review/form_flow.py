"""POST-redirect-GET for every form of the app: a form's POST answers 303, on to the page that
follows when it did its work, and back to the form's page when it was refused, the refusal's
message handed to that page in the one-read signed cookie (Auth.flash) and shown there once.
So a reload after a form never posts it again, and never shows its message twice.

What is no refusal of the form's content keeps its status: a request the page's own form
cannot make (another site's origin, no CSRF token, a field the form does not have, a body
over the cap) is refused (403, 413, 422) as the API refuses it, and an unknown candidate is
a 404: there is no page to go back to."""

from __future__ import annotations

from typing import Any, Optional

from fastapi import Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from skycity_bench.review.auth import FLASH_COOKIE
from skycity_bench.review.context import ReviewContext

ERROR_CHARS = 1000  # of a message carried in the cookie (a cookie holds about 4 kB)


def back_with_error(
    ctx: ReviewContext,
    request: Request,
    page: str,
    error: object,
    *,
    anchor: str = "",
    keep: Optional[dict[str, Any]] = None,
) -> Response:
    """303 back to the form's page (a path: the cookie is that page's), the message (and what
    the page keeps across the refusal, `keep`) handed to it once."""
    back = RedirectResponse(page + anchor, status_code=303)
    ctx.auth.flash(back, request, page, {**(keep or {}), "error": str(error)[:ERROR_CHARS]})
    return back


def handed_over(ctx: ReviewContext, request: Request) -> dict[str, Any]:
    """What a form's POST handed this page ({} when nothing, stale or forged): a refusal's
    `error`, or what a form made and shows once (an invitation link, an API token)."""
    return ctx.auth.take_flash(request) or {}


def shown(ctx: ReviewContext, request: Request, response: Response, page: str) -> Response:
    """The page after it showed what was handed over: a reload shows it no more."""
    if FLASH_COOKIE in request.cookies:
        ctx.auth.clear_flash(response, page)
    return response


__all__ = ["back_with_error", "handed_over", "shown", "ERROR_CHARS"]
