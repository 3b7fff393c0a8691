"""The admin's calibration and agreement pages, and their JSON twins under /api/admin/.

Calibration compares each reviewer's scores with anchors (agreed levels on some candidates):
the admin sets anchors by hand or from a finalised sheet, removes them, and sets N, the
number of latest scores drift is measured over. Agreement is Krippendorff's alpha per item
and overall. Every route here is admin-only (`auth.admin`: 401 anonymous, 403 a reviewer):
anchors and their levels, and each reviewer's figures, are never served to a reviewer (an
anchor must look like any other candidate to them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import Field
from starlette.responses import Response

from skycity_bench.analysis.agreement import FLAG_UNRELIABLE, GOOD_FROM, RELIABLE_FROM, agreement
from skycity_bench.review.auth import Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.form_flow import back_with_error, handed_over, shown
from skycity_bench.review.strict import Strict, form_fields
from skycity_bench.store.anchors import Calibration
from skycity_bench.store.validate import InvalidReview


class HandAnchor(Strict):
    candidate_id: str
    item: str = Field(description="a graded (manual or assisted) item id")
    level: str = Field(description="the agreed level: excellent|good|fair|poor|missing (or 优秀…缺失)")
    reason: str = Field(description="why this is the agreed level (kept with the anchor and in the audit trail)")


class SheetAnchor(Strict):
    candidate_id: str = Field(description="a candidate whose sheet is finalised")


class CalibrationSettings(Strict):
    drift_last: int = Field(description="drift is measured over each reviewer's last N comparable scores")


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    cal = Calibration(ctx.store)
    _calibration_forms(router, ctx, cal)
    _agreement_page(router, ctx)
    _api_anchors(router, ctx, cal)
    _api_figures(router, ctx, cal)
    return router


def render_calibration(
    ctx: ReviewContext,
    cal: Calibration,
    request: Request,
    me: Principal,
    error: str = "",
    done: str = "",
) -> Response:
    values = {
        "reviewer": me.name,
        "report": cal.report(),
        "graded": [i for i in ctx.rubric.items if i.graded],
        "levels": ctx.rubric.sorted_levels(),
        "candidates": ctx.store.candidates(),
        "finalised": cal.finalised(),
        "audit": cal.audit(30),
        "error": error,
        "done": done,
    }
    return ctx.page(request, "admin_calibration.html", values)


async def _form(request: Request) -> dict[str, str]:
    """A calibration form's fields (any other field refused: review/strict.py)."""
    return await form_fields(request, ("candidate_id", "item", "level", "reason", "drift_last"))


def _act(
    ctx: ReviewContext, cal: Calibration, request: Request, me: Principal, action: Callable[[], object], done: str
) -> Response:
    """Run an admin action from a form: back to the page (303), saying what was done, or
    why it was refused (form_flow)."""
    try:
        action()
    except InvalidReview as e:
        return back_with_error(ctx, request, "/admin/calibration", e)
    return RedirectResponse(f"/admin/calibration?done={done}", status_code=303)


def _calibration_forms(router: APIRouter, ctx: ReviewContext, cal: Calibration) -> None:
    auth = ctx.auth

    @router.get("/admin/calibration", response_class=HTMLResponse, include_in_schema=False)
    def calibration_page(request: Request, me: Principal = Depends(auth.admin)):
        error = str(handed_over(ctx, request).get("error", ""))
        page = render_calibration(ctx, cal, request, me, error, done=request.query_params.get("done", "")[:40])
        return shown(ctx, request, page, "/admin/calibration")

    @router.post("/admin/calibration/anchors/sheet", include_in_schema=False)
    async def anchors_from_sheet_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(ctx, cal, request, me, lambda: cal.from_sheet(f.get("candidate_id", ""), me.name), "sheet")

    @router.post("/admin/calibration/anchors/hand", include_in_schema=False)
    async def anchor_by_hand_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        cid, item, level, reason = (f.get(k, "") for k in ("candidate_id", "item", "level", "reason"))
        return _act(ctx, cal, request, me, lambda: cal.set_by_hand(cid, item, level, reason, me.name), "hand")

    @router.post("/admin/calibration/anchors/remove", include_in_schema=False)
    async def anchor_remove_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        cid, item = f.get("candidate_id", ""), f.get("item") or None
        return _act(ctx, cal, request, me, lambda: cal.remove(cid, me.name, item), "removed")

    @router.post("/admin/calibration/settings", include_in_schema=False)
    async def settings_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(ctx, cal, request, me, lambda: cal.set_drift_last(f.get("drift_last", ""), me.name), "setting")


def _agreement_page(router: APIRouter, ctx: ReviewContext) -> None:
    @router.get("/admin/agreement", response_class=HTMLResponse, include_in_schema=False)
    def agreement_page(request: Request, me: Principal = Depends(ctx.auth.admin)):
        sheets = ctx.store.sheets()
        values = {
            "reviewer": me.name,
            "agreement": agreement(sheets),
            "candidates": len(sheets),
            "good_from": GOOD_FROM,
            "reliable_from": RELIABLE_FROM,
            "flag_text": FLAG_UNRELIABLE,
        }
        return ctx.page(request, "admin_agreement.html", values)


def _api_anchors(router: APIRouter, ctx: ReviewContext, cal: Calibration) -> None:
    """The calibration report and the anchors it compares with."""
    auth = ctx.auth

    @router.get(
        "/api/admin/calibration",
        tags=["admin"],
        summary="Per reviewer and item: offset, mean absolute level difference and n against the anchors, "
        "and the same over their last N scores (drift); flagged above one level",
    )
    def api_calibration(me: Principal = Depends(auth.admin)):
        return cal.report().to_dict()

    @router.get("/api/admin/anchors", tags=["admin"], summary="The anchors: agreed levels per candidate and item")
    def api_anchors(me: Principal = Depends(auth.admin)):
        return [a.__dict__ for a in cal.anchors()]

    @router.post(
        "/api/admin/anchors",
        tags=["admin"],
        status_code=201,
        summary="Set one anchor by hand (a graded item, a level, a reason)",
    )
    def api_anchor_by_hand(body: HandAnchor, me: Principal = Depends(auth.admin)):
        return cal.set_by_hand(body.candidate_id, body.item, body.level, body.reason, me.name).__dict__

    @router.post(
        "/api/admin/anchors/from-sheet",
        tags=["admin"],
        status_code=201,
        summary="Anchors from a finalised sheet: each graded item's agreed level; splits are skipped",
    )
    def api_anchors_from_sheet(body: SheetAnchor, me: Principal = Depends(auth.admin)):
        return cal.from_sheet(body.candidate_id, me.name)

    @router.delete(
        "/api/admin/anchors/{cid}", tags=["admin"], summary="Remove a candidate's anchors (or one item's, with ?item=)"
    )
    def api_anchor_remove(cid: str, item: Optional[str] = None, me: Principal = Depends(auth.admin)):
        return {"removed": cal.remove(cid, me.name, item)}


def _api_figures(router: APIRouter, ctx: ReviewContext, cal: Calibration) -> None:
    """The drift setting and the agreement figures."""
    auth = ctx.auth

    @router.put(
        "/api/admin/calibration/settings",
        tags=["admin"],
        summary="Set N, the number of latest scores drift is measured over (this store's setting)",
    )
    def api_settings(body: CalibrationSettings, me: Principal = Depends(auth.admin)):
        return {"drift_last": cal.set_drift_last(body.drift_last, me.name)}

    @router.get(
        "/api/admin/agreement",
        tags=["admin"],
        summary="Krippendorff's alpha (ordinal) per item and overall, bootstrap 95 % interval, candidates",
    )
    def api_agreement(me: Principal = Depends(auth.admin)):
        return agreement(ctx.store.sheets()).to_dict()


__all__ = ["build"]
