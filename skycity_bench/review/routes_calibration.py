"""The admin's calibration and agreement pages (issue 20 parts 5 and 6), and their JSON
twins under /api/admin/. Every route here is admin-only (`auth.admin`: 401 anonymous, 403 a
reviewer): anchors and their levels, and each reviewer's figures, are never served to a
reviewer (an anchor must look like any other candidate to them).

Registered with one line in app.py: `app.include_router(routes_admin.build(store, auth, templates))`.
"""

from __future__ import annotations

from typing import Optional

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.analysis.agreement import FLAG_UNRELIABLE, GOOD_FROM, RELIABLE_FROM, agreement
from skycity_bench.review.auth import Auth, Principal
from skycity_bench.store.anchors import Calibration
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.validate import InvalidReview


class HandAnchor(BaseModel):
    model_config = ConfigDict(extra="forbid")
    candidate_id: str
    item: str = Field(description="a graded (manual or assisted) item id")
    level: str = Field(description="the agreed level: excellent|good|fair|poor|missing (or 优秀…缺失)")
    reason: str = Field(description="why this is the agreed level (kept with the anchor and in the audit trail)")


class SheetAnchor(BaseModel):
    model_config = ConfigDict(extra="forbid")
    candidate_id: str = Field(description="a candidate whose sheet is finalised")


class CalibrationSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    drift_last: int = Field(description="drift is measured over each reviewer's last N comparable scores")


def build(store: ReviewStore, auth: Auth, templates) -> APIRouter:
    router = APIRouter()
    cal = Calibration(store)
    rubric = store.rubric

    def _calibration_page(request: Request, me: Principal, error: str = "", done: str = "", status: int = 200):
        rep = cal.report()
        graded = [i for i in rubric.items if i.graded]
        finalised = cal.finalised()
        return templates.TemplateResponse(
            request,
            "admin_calibration.html",
            {
                "rubric": rubric,
                "reviewer": me.name,
                "report": rep,
                "graded": graded,
                "levels": rubric.sorted_levels(),
                "candidates": store.candidates(),
                "finalised": finalised,
                "audit": cal.audit(30),
                "error": error,
                "done": done,
            },
            status_code=status,
        )

    async def _form(request: Request) -> dict:
        return {k: str(v) for k, v in (await request.form()).items()}

    def _act(request: Request, me: Principal, action, done: str):
        """Run an admin action from a form: back to the page (303) or the page with the error."""
        try:
            action()
        except InvalidReview as e:
            return _calibration_page(request, me, error=str(e), status=e.status)
        return RedirectResponse(f"/admin/calibration?done={done}", status_code=303)

    # --- pages ------------------------------------------------------------------------------
    @router.get("/admin/calibration", response_class=HTMLResponse, include_in_schema=False)
    def calibration_page(request: Request, me: Principal = Depends(auth.admin)):
        return _calibration_page(request, me, done=request.query_params.get("done", "")[:40])

    @router.post("/admin/calibration/anchors/sheet", include_in_schema=False)
    async def anchors_from_sheet_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(request, me, lambda: cal.from_sheet(f.get("candidate_id", ""), me.name), "sheet")

    @router.post("/admin/calibration/anchors/hand", include_in_schema=False)
    async def anchor_by_hand_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(
            request,
            me,
            lambda: cal.set_by_hand(
                f.get("candidate_id", ""), f.get("item", ""), f.get("level", ""), f.get("reason", ""), me.name
            ),
            "hand",
        )

    @router.post("/admin/calibration/anchors/remove", include_in_schema=False)
    async def anchor_remove_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(
            request, me, lambda: cal.remove(f.get("candidate_id", ""), me.name, f.get("item") or None), "removed"
        )

    @router.post("/admin/calibration/settings", include_in_schema=False)
    async def settings_form(request: Request, me: Principal = Depends(auth.admin)):
        f = await _form(request)
        return _act(request, me, lambda: cal.set_drift_last(f.get("drift_last", ""), me.name), "setting")

    @router.get("/admin/agreement", response_class=HTMLResponse, include_in_schema=False)
    def agreement_page(request: Request, me: Principal = Depends(auth.admin)):
        sheets = store.sheets()
        return templates.TemplateResponse(
            request,
            "admin_agreement.html",
            {
                "rubric": rubric,
                "reviewer": me.name,
                "agreement": agreement(sheets),
                "candidates": len(sheets),
                "good_from": GOOD_FROM,
                "reliable_from": RELIABLE_FROM,
                "flag_text": FLAG_UNRELIABLE,
            },
        )

    # --- JSON twins ---------------------------------------------------------------------------
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
        return agreement(store.sheets()).to_dict()

    return router


__all__ = ["build"]
