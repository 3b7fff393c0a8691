"""The admin's side of the review: the team page (/team: accounts, invitations, finalising
and un-finalising sheets, the audit trail) and its JSON twins under /api/. Every route here
is admin-only (`auth.admin`: 401 anonymous, 403 a reviewer).

An invitation is a personal one-time sign-in link, shown once and stored only hashed. A
sheet is finalised only when no item is missing, unless forced with a reason; opening it
again needs a reason too. Each of these actions, and every unblinded sheet, leaves an audit row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Optional

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import Field
from starlette.responses import Response

from skycity_bench.review.auth import INVITE_TTL_S, Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.form_flow import back_with_error, handed_over, shown
from skycity_bench.review.sheet_access import sheet_response, visible_sheets
from skycity_bench.review.strict import Strict, form_fields
from skycity_bench.store import accounts
from skycity_bench.store.validate import InvalidReview, check_candidate_id

ACCOUNT_FIELDS = ("name", "role", "seat", "created_at", "disabled_at")  # what the API shows of an account


class Finalize(Strict):
    reason: str = Field("", description="why (kept in the audit trail); required with force")
    force: bool = Field(False, description="finalise although items are still missing (needs a reason)")


class Unfinalize(Strict):
    reason: str = Field(description="why the sheet is opened again (required; kept in the audit trail)")


class Invitation(Strict):
    name: str = Field(description="the new reviewer's name (shown on the sheet; decides nothing else)")
    role: Literal["reviewer", "admin"] = "reviewer"


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    _team_pages(router, ctx)
    _team_forms(router, ctx)
    _api_sheets(router, ctx)
    _api_team(router, ctx)
    return router


def render_team(
    ctx: ReviewContext,
    request: Request,
    me: Principal,
    new_link: Optional[dict[str, Any]] = None,
    error: str = "",
) -> Response:
    """The team page: accounts, links, audit, sheets to finalise; a new link shown once and
    why the last form was refused (both handed over by the form's POST: form_flow)."""
    store = ctx.store
    finalised = store.finalized_ids()
    values = {
        "reviewer": me.name,
        "accounts": accounts.accounts(store),
        "links": accounts.invitations(store)[:50],
        "audit": accounts.audit_rows(store, 100),
        "sheets": [(c, c in finalised) for c in store.candidates()],
        "new_link": new_link,
        "error": error,
    }
    return ctx.page(request, "team.html", values)


def _reissue(ctx: ReviewContext, me: Principal, acc: dict[str, Any]) -> str:
    """A new link for an existing account: refused while it is active (it has signed in and
    is not revoked): whoever holds the link could act in its owner's name, unseen. A revoked
    account is enabled again for the link; its owner sees the revocation and the re-issue."""
    store = ctx.store
    if accounts.is_active(store, acc["id"]):
        raise InvalidReview(
            f"{acc['name']!r} is an active account: a new sign-in link would let its holder act in their "
            "name. Revoke the account first (its sessions and tokens end, and its owner sees who did it)",
            409,
        )
    was = "revoked" if acc["disabled_at"] else "never signed in"
    if acc["disabled_at"]:
        accounts.enable(store, acc["name"], by=me.name)
    accounts.audit(store, me.name, "reissue", None, {"name": acc["name"], "was": was}, subject=acc["name"])
    return "reissue"


def invite(ctx: ReviewContext, request: Request, me: Principal, name: str, role: str) -> dict[str, Any]:
    """A new account and its invitation link, or a new link for an account that is not
    active (_reissue); audited either way, with the account as the row's subject."""
    store = ctx.store
    existing = accounts.account(store, " ".join(str(name).split()))
    if existing is not None and existing["role"] == role:
        _reissue(ctx, me, existing)
        acc = existing
    else:
        acc = accounts.create_account(store, name, role, by=me.name)
        accounts.audit(store, me.name, "invite", None, {"name": acc["name"], "role": acc["role"]}, subject=acc["name"])
    token = accounts.issue(store, acc["id"], "invite", by=me.name, ttl_s=INVITE_TTL_S)
    return {
        "name": acc["name"],
        "role": acc["role"],
        "link": str(request.base_url).rstrip("/") + f"/signin/{token}",
        "expires_in_s": INVITE_TTL_S,
    }


def finalize(ctx: ReviewContext, cid: str, me: Principal, body: Finalize) -> bool:
    """Finalise a candidate's sheet: refused while items are missing, unless forced with a
    reason. False when it was final already."""
    check_candidate_id(cid)
    if not ctx.store.has_candidate(cid):
        raise InvalidReview(f"no such candidate: {cid}", 404)
    sheet = ctx.store.sheet(cid)
    if sheet.total is None and not body.force:
        raise InvalidReview(
            f"{cid}: {len(sheet.missing)} item(s) still missing; finalise anyway with force and a reason", 409
        )
    if body.force and not body.reason.strip():
        raise InvalidReview("finalising with items missing needs a reason", 422)
    return accounts.finalize(ctx.store, cid, by=me.name, reason=body.reason.strip())


def _team_pages(router: APIRouter, ctx: ReviewContext) -> None:
    auth = ctx.auth

    @router.get("/team", response_class=HTMLResponse, include_in_schema=False)
    def team_page(request: Request, me: Principal = Depends(auth.admin)):
        note = handed_over(ctx, request)
        new_link = note if "link" in note else None
        return shown(ctx, request, render_team(ctx, request, me, new_link, str(note.get("error", ""))), "/team")

    @router.post("/team/invite", include_in_schema=False)
    async def team_invite(request: Request, me: Principal = Depends(auth.admin)):
        form = await form_fields(request, ("name", "role"))
        role = "admin" if form.get("role") == "admin" else "reviewer"
        try:
            link = invite(ctx, request, me, str(form.get("name", "")), role)
        except InvalidReview as e:
            return back_with_error(ctx, request, "/team", e, anchor="#invite")
        done = RedirectResponse("/team#new-link", status_code=303)  # POST-redirect-GET
        auth.flash(done, request, "/team", link)
        return done


def _team_forms(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    def done_or_refused(request: Request, action: Callable[[], object]) -> Response:
        """Back to the team page (POST-redirect-GET), saying why if the action was refused."""
        try:
            action()
        except InvalidReview as e:
            return back_with_error(ctx, request, "/team", e)
        return RedirectResponse("/team", status_code=303)

    def disable(name: str, me: Principal) -> None:
        if name == me.name:
            raise InvalidReview("you cannot disable your own account", 409)
        accounts.disable(store, name, by=me.name)

    @router.post("/team/disable", include_in_schema=False)
    async def team_disable(request: Request, me: Principal = Depends(auth.admin)):
        name = (await form_fields(request, ("name",))).get("name", "")  # a form field: a name may hold "/"
        return done_or_refused(request, lambda: disable(name, me))

    @router.post("/team/finalize/{cid}", include_in_schema=False)
    async def team_finalize(request: Request, cid: str, me: Principal = Depends(auth.admin)):
        form = await form_fields(request, ("reason", "force"))
        body = Finalize(reason=form.get("reason", ""), force=form.get("force") == "1")
        return done_or_refused(request, lambda: finalize(ctx, cid, me, body))

    @router.post("/team/unfinalize/{cid}", include_in_schema=False)
    async def team_unfinalize(request: Request, cid: str, me: Principal = Depends(auth.admin)):
        form = await form_fields(request, ("reason",))
        return done_or_refused(
            request, lambda: accounts.unfinalize(store, cid, by=me.name, reason=form.get("reason", ""))
        )


def _api_sheets(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.post(
        "/api/candidates/{cid}/finalize",
        tags=["admin"],
        summary="Finalise a candidate's sheet (admin; refused while items are missing unless forced)",
    )
    def api_finalize(cid: str, body: Optional[Finalize] = None, me: Principal = Depends(auth.admin)):
        return {"finalized": cid, "changed": finalize(ctx, cid, me, body or Finalize())}

    @router.post(
        "/api/candidates/{cid}/unfinalize",
        tags=["admin"],
        summary="Open a finalised sheet again (admin; reason required, audited)",
    )
    def api_unfinalize(cid: str, body: Unfinalize, me: Principal = Depends(auth.admin)):
        return {"unfinalized": cid, "changed": accounts.unfinalize(store, cid, by=me.name, reason=body.reason)}

    @router.get(
        "/api/admin/unblinded-sheet", tags=["admin"], summary="The sheet with the candidates' labels (admin; audited)"
    )
    def api_unblind(format: Literal["json", "md", "csv"] = "json", me: Principal = Depends(auth.admin)):  # noqa: A002
        accounts.audit(store, me.name, "unblind", None, {"format": format})
        return sheet_response(format, visible_sheets(store, me, unblind=True))


def _api_team(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.post(
        "/api/admin/invitations",
        tags=["admin"],
        status_code=201,
        summary="Invite a reviewer: a personal one-time sign-in link (shown once; stored only hashed)",
    )
    def api_invite(request: Request, body: Invitation, me: Principal = Depends(auth.admin)):
        return invite(ctx, request, me, body.name, body.role)

    @router.get("/api/admin/accounts", tags=["admin"], summary="Every account and its role (admin)")
    def api_accounts(me: Principal = Depends(auth.admin)):
        return [{k: a[k] for k in ACCOUNT_FIELDS} for a in accounts.accounts(store)]

    @router.get("/api/admin/audit", tags=["admin"], summary="The audit trail of admin actions, newest first (admin)")
    def api_audit(me: Principal = Depends(auth.admin)):
        return accounts.audit_rows(store)


__all__ = ["build", "Finalize", "Unfinalize", "Invitation"]
