"""Reviewing: the queue, a candidate's page and its form (scores, overrides, "save & next"),
the sheet, the run files, and the same as a JSON API for scripts (bearer tokens).

Every page and answer is built from the store's blind views (anonymous ids, reports masked
at import, files by number). Every write goes through ReviewStore.submit, which validates the
whole submission before storing any of it, in one transaction. The reviewer is always the
signed-in account, never a name in the body.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import Field

from skycity_bench.analysis.agreement import agreement
from skycity_bench.judging.sheet_totals import rank
from skycity_bench.review import timing
from skycity_bench.review.auth import API_TOKEN_TTL_S, Forbidden, Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.form_flow import back_with_error, handed_over, shown
from skycity_bench.review.guard import file_number, run_file_headers
from skycity_bench.review.sheet_access import sheet_response, visible_sheets
from skycity_bench.review.sheet_page import FILTERS, sheet_page
from skycity_bench.review.strict import Strict, form_fields, no_body
from skycity_bench.review.views import candidate_view, video_time
from skycity_bench.store import accounts, timings
from skycity_bench.store.anchors import still_open
from skycity_bench.store.validate import CANDIDATE_ID, InvalidReview, check_candidate_id

Scores = list[dict[str, Any]]


class Grade(Strict):
    item: str = Field(description="a manual or assisted item id, e.g. camera.motion")
    level: Optional[str | int] = Field(
        None, description="level key (excellent|good|fair|poor|missing), 优秀…缺失, or percent 100|75|50|25|0"
    )
    points: Optional[float] = Field(None, description="alternatively the points: one level's share × the item's value")
    comment: str = ""


class Override(Strict):
    item: str = Field(description="an automated item id, e.g. shops.touch")
    points: float = Field(description="the reviewer's points, on the rubric's half-point grid")
    reason: str = Field(description="why the bench's value is overridden (required, kept and shown)")
    comment: str = ""


class Submission(Strict):
    # the reviewer is the signed-in account (bearer token or session), never the body: a
    # body that still names one anywhere (`reviewer`, `by`, also inside a grade) is refused
    # (422), not silently re-attributed
    rubric_id: str = Field(description="the rubric the scores were given under; must be the store's")
    grades: list[Grade] = Field(default_factory=list)
    overrides: list[Override] = Field(default_factory=list)


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    _pages(router, ctx)
    _files(router, ctx)
    _api_reviewer(router, ctx)
    _api_tokens(router, ctx)
    _api_candidates(router, ctx)
    return router


# --- the candidate page ----------------------------------------------------------------------
def render_candidate(
    ctx: ReviewContext,
    request: Request,
    cid: str,
    name: str,
    *,
    error: str = "",
    saved: str = "",
    start: Optional[float] = None,
    opened: Optional[str] = None,
) -> Response:
    """A candidate's page for reviewer `name`: the shown run beside the rubric, their own
    scores, the items a third reviewer is wanted on, why their last save was refused
    (`error`), and the page's signed opening time (`opened`: kept from the form a refused
    save came from, else now)."""
    store = ctx.store
    if not store.has_candidate(cid):
        raise InvalidReview(f"no such candidate: {cid}", 404)
    sheet = store.sheet(cid)
    mine = store.reviews(cid, name)
    scored = {r.item_id for r in mine}
    wanted = [i.item_id for i in sheet.items if "needs third reviewer" in i.flags and i.item_id not in scored]
    values = {
        "reviewer": name,
        "v": candidate_view(ctx.rubric, cid, store.shown_run(cid), mine, wanted),
        "error": error,
        "saved": saved,
        "finalized": sheet.finalized and cid not in still_open(store, store.reviewer(name)["id"]),
        "start": start,
        "opened": opened or ctx.stamp.issue(name, cid),
    }
    return ctx.page(request, "candidate.html", values)


# the candidate page form's fields (anything else is refused: review/strict.py)
PAGE_FIELDS = ("candidate", "rubric_id", "then", "video_t", timing.FIELD)
PAGE_PREFIXES = ("grade:", "comment:", "override:", "reason:")


def saved_note(request: Request) -> str:
    """What the last save stored, from the redirect after it: "saved: N item(s) for
    candidate X" (empty unless both are well formed)."""
    n, cid = request.query_params.get("saved", ""), request.query_params.get("for", "")
    if not (n.isascii() and n.isdigit() and len(n) <= 3 and CANDIDATE_ID.match(cid)):
        return ""
    return f"{n} item(s) for candidate {cid}"


def scores_from_form(form: dict[str, str]) -> tuple[Scores, Scores]:
    """The page form's grades (`grade:ITEM`, with `comment:ITEM`) and overrides
    (`override:ITEM`, with `reason:ITEM`); empty fields are not scores."""
    grades: Scores = []
    overrides: Scores = []
    for key, value in form.items():
        if key.startswith("grade:") and value != "":
            iid = key[len("grade:") :]
            grades.append({"item": iid, "level": value, "comment": form.get(f"comment:{iid}", "")})
        elif key.startswith("override:") and str(value).strip() != "":
            iid = key[len("override:") :]
            overrides.append({"item": iid, "points": str(value).strip(), "reason": form.get(f"reason:{iid}", "")})
    return grades, overrides


def next_candidate(ctx: ReviewContext, name: str, cid: str) -> Optional[str]:
    """The candidate after `cid` in this reviewer's queue order (None after the last)."""
    order = ctx.store.order_for(ctx.store.reviewer(name)["seat"])
    i = order.index(cid) if cid in order else len(order)
    return order[i + 1] if i + 1 < len(order) else None


def save_from_page(ctx: ReviewContext, request: Request, cid: str, name: str, form: dict[str, str]) -> Response:
    """Store the page form's scores, then back to the page, or on to the next candidate
    ("save & next", same video time); a refusal goes back to the page, which says why
    (nothing stored) and keeps its opening time (review/form_flow.py)."""
    check_candidate_id(cid)  # the page a refusal goes back to: a candidate's (else 404)
    grades, overrides = scores_from_form(form)
    then_next = form.get("then") == "next"
    opened = form.get(timing.FIELD)
    opened_at = ctx.stamp.opened_at(opened, name, cid)
    try:
        if form.get("candidate") != cid:
            raise InvalidReview("the form's candidate id does not match the page", 422)
        if then_next and not grades and not overrides:  # "next" with nothing chosen: move on
            res: dict[str, Any] = {"stored": 0}
        else:
            res = ctx.store.submit(cid, name, str(form.get("rubric_id", "")), grades, overrides, source="web")
    except InvalidReview as e:
        if e.status == 404:  # no such candidate: no page to go back to
            raise
        kept = {"opened": opened} if opened_at else {}
        return back_with_error(ctx, request, f"/c/{cid}", f"{e} — nothing was stored", keep=kept)
    if "review_ids" in res and opened_at:  # saved from the page: time since the server opened it
        timings.record(ctx.store, name, cid, opened_at, timing.now())
    # POST-redirect-GET; the page it lands on says what was saved for which candidate
    said = f"saved={res['stored']}&for={cid}"
    if not then_next:
        return RedirectResponse(f"/c/{cid}?{said}", status_code=303)
    nxt = next_candidate(ctx, name, cid)
    if nxt is None:
        return RedirectResponse(f"/queue?{said}", status_code=303)
    t = video_time(form.get("video_t"))
    return RedirectResponse(f"/c/{nxt}?{said}" + (f"&t={t:g}" if t is not None else ""), status_code=303)


# --- pages -------------------------------------------------------------------------------------
def _pages(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.get("/queue", response_class=HTMLResponse, include_in_schema=False)
    def queue(request: Request, me: Principal = Depends(auth.reviewer)):
        values = {"reviewer": me.name, "queue": store.queue(me.name), "saved": saved_note(request)}
        return ctx.page(request, "queue.html", values)

    @router.get("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    def candidate_page(request: Request, cid: str, me: Principal = Depends(auth.reviewer)):
        check_candidate_id(cid)
        if me.is_admin and not store.has_candidate(cid):
            # an admin's old link (the bench's hash-derived id, before the store's random
            # ids): to the candidate's page. A reviewer gets the 404 of any unknown id, or
            # hashing the candidate files would find the candidates again through it
            known = store.by_bench_id(cid)
            if known is not None:
                return RedirectResponse(f"/c/{known}", status_code=303)
        start = video_time(request.query_params.get("t"))
        note = handed_over(ctx, request)  # a refused save: why, and the page's opening time
        opened = note.get("opened")
        kept = opened if isinstance(opened, str) and ctx.stamp.opened_at(opened, me.name, cid) else None
        page = render_candidate(
            ctx,
            request,
            cid,
            me.name,
            error=str(note.get("error", "")),
            saved=saved_note(request),
            start=start,
            opened=kept,
        )
        return shown(ctx, request, page, f"/c/{cid}")

    @router.post("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    async def candidate_submit(request: Request, cid: str, me: Principal = Depends(auth.reviewer)):
        return save_from_page(ctx, request, cid, me.name, await form_fields(request, PAGE_FIELDS, PAGE_PREFIXES))

    @router.get("/sheet", response_class=HTMLResponse, include_in_schema=False)
    def sheet_html(request: Request, me: Principal = Depends(auth.reviewer)):
        sheets = visible_sheets(store, me)
        page = sheet_page(sheets, dict(request.query_params))
        values = {
            "reviewer": me.name,
            "p": page,
            "sheets": page.sheets,
            "filters": FILTERS,
            "ranking": rank(sheets),
            "agreement": agreement(sheets),
        }
        return ctx.page(request, "sheet.html", values)

    @router.get("/sheet.{fmt}", include_in_schema=False)
    def sheet_export(fmt: Literal["md", "csv", "json"], me: Principal = Depends(auth.reviewer)):
        return sheet_response(fmt, visible_sheets(store, me))


def _files(router: APIRouter, ctx: ReviewContext) -> None:
    store = ctx.store

    @router.get("/files/{file_id}", include_in_schema=False, dependencies=[Depends(ctx.auth.reviewer)])
    def run_file(file_id: str):
        """A run file: a text file masked with its candidate's label(s) and hash, anything
        else as stored, with no file name in the headers (not the reviewers' business);
        sandboxed, and a download where a browser would run it (guard.run_file_headers)."""
        f = store.file(file_number(file_id))
        headers = run_file_headers(f.mime)
        if f.is_text:
            text = f.read_bytes().decode("utf-8", errors="replace")
            return PlainTextResponse(store.mask_for_serving(text, f.candidate_id), media_type=f.mime, headers=headers)
        if f.path is None:  # kept in the database (a queue worker's run)
            return Response(f.data, media_type=f.mime, headers=headers)
        return FileResponse(f.path, media_type=f.mime, headers=headers, filename=None)

    realtime_js = ctx.templates.env.loader.get_source(ctx.templates.env, "_realtime.js")[0]  # type: ignore[union-attr]  # the app's templates have a loader

    @router.get("/js/realtime.js", include_in_schema=False, dependencies=[Depends(ctx.auth.public)])
    def realtime_script():
        """The real-time plot's script (one copy, templates/_realtime.js, inline in report.html)."""
        return Response(realtime_js, media_type="text/javascript; charset=utf-8")


# --- JSON API ----------------------------------------------------------------------------------
def _api_reviewer(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.get(
        "/api/rubric",
        tags=["rubric"],
        summary="The rubric in force: items, values, levels, wording",
        dependencies=[Depends(auth.reviewer)],
    )
    def api_rubric():
        return {**ctx.rubric.model_dump(mode="json"), "sha256": ctx.rubric.sha256}

    @router.get("/api/me", tags=["reviewers"], summary="Who the token or session belongs to")
    def api_me(me: Principal = Depends(auth.reviewer)):
        return {"name": me.name, "role": me.role}

    @router.get(
        "/api/me/audit",
        tags=["reviewers"],
        summary="The audit rows that concern you (admin actions on your account, finalising of your candidates)",
    )
    def api_my_audit(me: Principal = Depends(auth.reviewer)):
        return accounts.audit_for(store, me.name)

    @router.get("/api/me/queue", tags=["reviewers"], summary="Your queue: anonymous candidates in your order")
    def api_my_queue(me: Principal = Depends(auth.reviewer)):
        return store.queue(me.name)

    @router.get(
        "/api/reviewers/{name}/queue",
        tags=["reviewers"],
        summary="A reviewer's queue: anonymous candidates in their order (your own; an admin any)",
    )
    def api_queue(name: str, me: Principal = Depends(auth.reviewer)):
        if name != me.name and not me.is_admin:
            raise Forbidden("a reviewer sees their own queue only")
        return store.queue(name)

    @router.get(
        "/api/candidates", tags=["candidates"], summary="Anonymous candidate ids", dependencies=[Depends(auth.reviewer)]
    )
    def api_candidates():
        return store.candidates()


def _api_tokens(router: APIRouter, ctx: ReviewContext) -> None:
    """The account's API tokens: made from a browser session only, listed, revoked."""
    auth, store = ctx.auth, ctx.store

    @router.post(
        "/api/me/tokens",
        tags=["reviewers"],
        status_code=201,
        summary="A new personal API token (shown once; stored only hashed)",
        dependencies=[Depends(no_body)],
    )
    def api_new_token(me: Principal = Depends(auth.reviewer)):
        auth.require_session(me)
        token = accounts.issue(store, me.id, "api", by=me.name, ttl_s=API_TOKEN_TTL_S)
        return {"token": token, "expires_in_s": API_TOKEN_TTL_S}

    @router.get("/api/me/tokens", tags=["reviewers"], summary="Your API tokens (never their secrets)")
    def api_my_tokens(me: Principal = Depends(auth.reviewer)):
        return accounts.tokens(store, me.id)

    @router.delete(
        "/api/me/tokens/{tid}",
        tags=["reviewers"],
        summary="Revoke one of your API tokens (at once; the token itself may do it)",
        dependencies=[Depends(no_body)],
    )
    def api_revoke_token(tid: int, me: Principal = Depends(auth.reviewer)):
        if not accounts.revoke(store, tid, me.id):
            raise InvalidReview("no such live token of yours", 404)
        return {"revoked": tid}


def _api_candidates(router: APIRouter, ctx: ReviewContext) -> None:
    auth, store = ctx.auth, ctx.store

    @router.get(
        "/api/candidates/{cid}",
        tags=["candidates"],
        dependencies=[Depends(auth.reviewer)],
        summary="A candidate's shown run (the admin's pick, else the most complete), blind: items, evidence, files by id",
    )
    def api_candidate(cid: str):
        check_candidate_id(cid)
        # the report as masked at import (its candidate block is the anonymous id only: no full
        # file hash), sent as stored around the file list: a report is megabytes, never parsed here
        text = store.shown_run_json(cid)
        if text is None:
            raise InvalidReview(f"no such candidate: {cid}", 404)
        return Response(text, media_type="application/json")

    @router.get(
        "/api/candidates/{cid}/reviews",
        tags=["reviews"],
        summary="Your own standing scores of a candidate (an admin may name another reviewer)",
    )
    def api_my_reviews(cid: str, reviewer: Optional[str] = None, me: Principal = Depends(auth.reviewer)):
        if reviewer is not None and reviewer != me.name and not me.is_admin:
            raise Forbidden("a reviewer sees their own scores only")
        return [r.__dict__ for r in store.reviews(cid, reviewer if me.is_admin and reviewer else me.name)]

    @router.post(
        "/api/candidates/{cid}/reviews",
        tags=["reviews"],
        status_code=201,
        summary="Submit your scores: levels for manual/assisted items, overrides (with reason) for automated ones",
    )
    def api_submit(cid: str, body: Submission = Body(...), me: Principal = Depends(auth.reviewer)):
        grades = [g.model_dump() for g in body.grades]
        return store.submit(
            cid, me.name, body.rubric_id, grades, [o.model_dump() for o in body.overrides], source="api"
        )

    @router.get(
        "/api/sheet",
        tags=["sheet"],
        summary="The 100-point sheet of every candidate (blind; a reviewer sees others' values once final)",
    )
    def api_sheet(format: Literal["json", "md", "csv"] = "json", me: Principal = Depends(auth.reviewer)):  # noqa: A002
        return sheet_response(format, visible_sheets(store, me))


__all__ = ["build", "Grade", "Override", "Submission"]
