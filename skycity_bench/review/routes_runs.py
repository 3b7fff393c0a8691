"""Which run a candidate shows, and the thumbnails of its images.

- `/thumbs/{file_id}` (any signed-in account): an image's thumbnail, made at import (480 px
  WebP, store/artefacts.py); the candidate page shows these, lazily loaded, and opens the full
  image (`/files/{file_id}`) on click. A file without a thumbnail (not an image OpenCV reads)
  is served as itself; a text file is sent to /files (masked there).
- `/admin/runs` and its JSON twins (admins only): every candidate's runs (when, items
  collected, reviews given on each), which one is shown and why; the admin picks the run to
  show, with a reason (store.choose_run: run_choice and an audit row), or goes back to the
  automatic rule (the most complete run, ties to the latest), so a partial re-run never
  silently replaces a full run. Refused once the candidate's sheet is finalised.
"""

from __future__ import annotations

from typing import Optional

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from pydantic import Field

from skycity_bench.review.auth import Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.form_flow import back_with_error, handed_over, shown
from skycity_bench.review.guard import file_number, run_file_headers
from skycity_bench.review.strict import Strict, form_fields
from skycity_bench.store.validate import InvalidReview

# a thumbnail of a file id never changes (runs are immutable): the browser keeps it (privately)
THUMB_CACHE = "private, max-age=86400"


class RunChoice(Strict):
    run_id: Optional[int] = Field(
        description="the run to show; null: back to the automatic rule (most items collected, ties to the latest)"
    )
    reason: str = Field(description="why (required; kept with the choice and in the audit trail)")


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    _thumbs(router, ctx)
    _runs_pages(router, ctx)
    _api_runs(router, ctx)
    return router


def _thumbs(router: APIRouter, ctx: ReviewContext) -> None:
    @router.get("/thumbs/{file_id}", include_in_schema=False, dependencies=[Depends(ctx.auth.reviewer)])
    def thumb(file_id: str):
        fid = file_number(file_id)
        f = ctx.store.thumbnail(fid)
        if f.is_text:  # never an image: its masked text is at /files
            return RedirectResponse(f"/files/{fid}", status_code=307)
        headers = run_file_headers(f.mime, {"cache-control": THUMB_CACHE})
        if f.path is None:
            return Response(f.read_bytes(), media_type=f.mime, headers=headers)
        return FileResponse(
            f.path, media_type=f.mime, headers=headers, content_disposition_type="inline", filename=None
        )


def render_runs(ctx: ReviewContext, request: Request, me: Principal, error: str = "", done: str = "") -> Response:
    values = {"reviewer": me.name, "candidates": ctx.store.runs_overview(), "error": error, "done": done}
    return ctx.page(request, "runs.html", values)


def run_number(raw: str) -> Optional[int]:
    """The form's run choice: a run number, or None for "" and "auto" (the automatic rule)."""
    if raw in ("", "auto"):
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise InvalidReview("not a run number", 422)
    return int(raw)


def _runs_pages(router: APIRouter, ctx: ReviewContext) -> None:
    auth = ctx.auth

    @router.get("/admin/runs", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(request: Request, me: Principal = Depends(auth.admin)):
        error = str(handed_over(ctx, request).get("error", ""))
        page = render_runs(ctx, request, me, error, done=request.query_params.get("done", "")[:40])
        return shown(ctx, request, page, "/admin/runs")

    @router.post("/admin/runs/{cid}", include_in_schema=False)
    async def choose_form(request: Request, cid: str, me: Principal = Depends(auth.admin)):
        form = await form_fields(request, ("run_id", "reason"))
        try:
            run_id = run_number(str(form.get("run_id", "")).strip())
            ctx.store.choose_run(cid, run_id, me.name, str(form.get("reason", "")))
        except InvalidReview as e:  # back to the page, saying why (form_flow)
            return back_with_error(ctx, request, "/admin/runs", f"{cid}: {e}", anchor=f"#runs-{cid}")
        return RedirectResponse(f"/admin/runs?done={cid}#runs-{cid}", status_code=303)


def _api_runs(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.get(
        "/api/admin/runs",
        tags=["admin"],
        summary="Every candidate's runs: items collected, reviews on each, the one shown and why (admin)",
    )
    def api_runs(me: Principal = Depends(auth.admin)):
        return store.runs_overview()

    @router.get(
        "/api/admin/candidates/{cid}/runs",
        tags=["admin"],
        summary="One candidate's runs, the one shown and why, the standing choice (admin)",
    )
    def api_runs_of(cid: str, me: Principal = Depends(auth.admin)):
        return store.runs_of(cid)

    @router.put(
        "/api/admin/candidates/{cid}/run",
        tags=["admin"],
        summary="Pick the run a candidate shows, with a reason (admin; audited); run_id null: automatic",
    )
    def api_choose(cid: str, body: RunChoice, me: Principal = Depends(auth.admin)):
        return store.choose_run(cid, body.run_id, me.name, body.reason)


__all__ = ["build", "RunChoice"]
