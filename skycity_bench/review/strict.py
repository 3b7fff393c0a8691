"""Bodies the app reads: every field named, nothing else accepted.

A JSON body is read through a `Strict` model (pydantic, extra="forbid", nested models too):
an unknown field anywhere, such as a `reviewer` inside a grade, is a 422 and nothing is
stored. A form is read through `form_fields` with the fields (and field prefixes, e.g.
`grade:`) the route takes: any other field is a 422 too. A route that takes no body says so
with `Depends(no_body)`: a body it would silently ignore is refused. So a body can never
name the account a write is made for: that is always the signed-in account.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from fastapi import Request
from pydantic import BaseModel, ConfigDict

from skycity_bench.review.auth import CSRF_FIELD
from skycity_bench.store.validate import InvalidReview

NOT_THE_BODY = "not accepted: the reviewer is the signed-in account (API token or session), never the body"
NAMES_SOMEONE = ("reviewer", "by", "as", "actor", "account")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class Strict(BaseModel):
    """A request body's model: unknown fields refused (422), at every depth."""

    model_config = ConfigDict(extra="forbid")


def refusal(field: str) -> InvalidReview:
    """The 422 for an unknown field; one naming an account is told who the reviewer is."""
    last = field.rsplit(".", 1)[-1].split(":", 1)[0].lower()
    why = NOT_THE_BODY if last in NAMES_SOMEONE else "unknown field: nothing was stored"
    return InvalidReview(f"{field}: {why}", 422)


def _content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def form_fields(request: Request, allowed: Iterable[str] = (), prefixes: Iterable[str] = ()) -> dict[str, str]:
    """The form's fields as text, the CSRF token left out; any field not `allowed` and not
    starting with one of `prefixes` is refused (422), and so is a field sent twice."""
    keep, starts = set(allowed) | {CSRF_FIELD}, tuple(prefixes)
    form = await request.form()
    out: dict[str, str] = {}
    for key, value in form.multi_items():
        if key not in keep and not (starts and key.startswith(starts)):
            raise refusal(key)
        if key in out:
            raise InvalidReview(f"{key}: sent twice: nothing was stored", 422)
        out[key] = str(value)
    out.pop(CSRF_FIELD, None)
    return out


async def no_body(request: Request) -> None:
    """For a route that reads no body: a form may carry the CSRF token only; JSON must be
    empty (nothing, {} or null). Anything else is refused (422), never ignored."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    if _content_type(request) in FORM_TYPES:
        await form_fields(request)
        return
    raw = (await request.body()).strip()
    if not raw:
        return
    try:
        doc = json.loads(raw)
    except ValueError:
        raise InvalidReview("this route takes no body: nothing was stored", 422) from None
    if doc not in ({}, None):
        first = next(iter(doc), "body") if isinstance(doc, dict) else "body"
        raise refusal(str(first))


__all__ = ["Strict", "form_fields", "no_body", "refusal", "NOT_THE_BODY"]
