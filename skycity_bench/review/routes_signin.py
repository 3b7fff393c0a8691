"""Signing in and out, the only pages anonymous visitors see, and the account's own page
(/me: its personal API tokens).

A sign-in link (an invitation, or an admin's link from the CLI) opens a page with a button:
a GET never uses the one-time link up (mail scanners and link previews fetch links), the
POST does and starts a session. Signing out ends the session on the server too.
"""

from __future__ import annotations

from typing import Optional
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.responses import Response

from skycity_bench.review.auth import API_TOKEN_TTL_S, Forbidden, Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.strict import no_body
from skycity_bench.store import accounts

DEAD_LINK = "This link is not valid: unknown, expired, already used or revoked. Ask your admin for a new one."


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    _sign_in(router, ctx)
    _account(router, ctx)
    return router


def link_page(ctx: ReviewContext, request: Request, token: str) -> Response:
    """A sign-in link's page: the button for a live link, else 410 and why."""
    acc = accounts.peek(ctx.store, token)
    if acc is None:
        return ctx.page(request, "signin.html", {"reviewer": None, "error": DEAD_LINK}, 410)
    return ctx.page(request, "signin.html", {"reviewer": None, "link_for": acc["name"], "token": token})


def check_origin(request: Request) -> None:
    """Login CSRF: a foreign page must not sign a reviewer's browser into another account
    (its own link); a browser's POST names its page's origin, which must be this host."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
        raise Forbidden("sign-in from another site refused: open the link itself")


def _sign_in(router: APIRouter, ctx: ReviewContext) -> None:
    auth = ctx.auth

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request, me: Optional[Principal] = Depends(auth.principal_or_none)):
        if me is not None:
            return RedirectResponse("/queue", status_code=303)
        return ctx.page(request, "signin.html", {"reviewer": None})

    @router.get(
        "/signin/{token}", response_class=HTMLResponse, include_in_schema=False, dependencies=[Depends(auth.public)]
    )
    def signin_link(request: Request, token: str):
        """The link's page: a button signs in (a GET never uses the link up)."""
        return link_page(ctx, request, token)

    @router.post("/signin/{token}", include_in_schema=False, dependencies=[Depends(auth.public), Depends(no_body)])
    def signin(request: Request, token: str):
        check_origin(request)
        acc = accounts.redeem(ctx.store, token)
        if acc is None:  # back to the link's page (POST-redirect-GET), which says it is dead
            return RedirectResponse(f"/signin/{token}", status_code=303)
        resp = RedirectResponse("/queue", status_code=303)
        auth.set_session(resp, request, acc["id"])
        return resp

    @router.post("/signout", include_in_schema=False, dependencies=[Depends(no_body)])
    def signout(request: Request, me: Principal = Depends(auth.reviewer)):
        auth.end_session(request)
        resp = RedirectResponse("/", status_code=303)
        auth.clear_session(resp)
        return resp


def account_page(ctx: ReviewContext, request: Request, me: Principal, new: Optional[str] = None) -> Response:
    """The account's page: its API tokens (never their secrets), and a new one shown once."""
    values = {
        "reviewer": me.name,
        "tokens": accounts.tokens(ctx.store, me.id),
        "new": new,
        "audit": accounts.audit_for(ctx.store, me.name),
    }
    return ctx.page(request, "me.html", values)


def _account(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.get("/me", response_class=HTMLResponse, include_in_schema=False)
    def me_page(request: Request, me: Principal = Depends(auth.reviewer)):
        new = auth.take_flash(request)
        page = account_page(ctx, request, me, str(new["token"]) if new and "token" in new else None)
        auth.clear_flash(page, "/me")
        return page

    @router.post("/me/tokens", response_class=HTMLResponse, include_in_schema=False, dependencies=[Depends(no_body)])
    def me_new_token(request: Request, me: Principal = Depends(auth.reviewer)):
        auth.require_session(me)
        token = accounts.issue(store, me.id, "api", by=me.name, ttl_s=API_TOKEN_TTL_S)
        done = RedirectResponse("/me#new-token", status_code=303)  # POST-redirect-GET
        auth.flash(done, request, "/me", {"token": token})
        return done

    @router.post("/me/tokens/{tid}/revoke", include_in_schema=False, dependencies=[Depends(no_body)])
    def me_revoke_token(tid: int, me: Principal = Depends(auth.reviewer)):
        accounts.revoke(store, tid, me.id)
        return RedirectResponse("/me", status_code=303)


__all__ = ["build"]
