"""The reviewers' web app (FastAPI + Jinja2) and its JSON API (documented at /docs).

Blind by construction: pages and API answers are built only from the store's blind views
(anonymous ids, masked reports, files by number); the id ↔ label table is never read here,
so nothing this app serves can unblind a candidate. A reviewer sees only their own scores.
Every write goes through ReviewStore.submit, which validates the whole submission before storing
any of it, in one transaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Literal, Optional
from urllib.parse import quote, unquote

from fastapi import Body, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

from .. import __version__
from ..agreement import agreement
from ..sheet import hide_reviews, rank, to_csv, to_json, to_markdown
from ..store import InvalidReview, ReviewStore
from . import guard
from .views import candidate_view, video_time

HERE = Path(__file__).resolve().parent
COOKIE = "skycity_reviewer"


class SignIn(BaseModel):
    name: str = Field(description="the reviewer's name (any; the sign-in order decides the queue order)")


class Grade(BaseModel):
    item: str = Field(description="a manual or assisted item id, e.g. camera.motion")
    level: Optional[str | int] = Field(None, description="level key (excellent|good|fair|poor|missing), 优秀…缺失, or percent 100|75|50|25|0")
    points: Optional[float] = Field(None, description="alternatively the points: one level's share × the item's value")
    comment: str = ""


class Override(BaseModel):
    item: str = Field(description="an automated item id, e.g. shops.touch")
    points: float = Field(description="the reviewer's points, on the rubric's half-point grid")
    reason: str = Field(description="why the bench's value is overridden (required, kept and shown)")
    comment: str = ""


class Submission(BaseModel):
    reviewer: str
    rubric_id: str = Field(description="the rubric the scores were given under; must be the store's")
    grades: list[Grade] = Field(default_factory=list)
    overrides: list[Override] = Field(default_factory=list)


class Finalize(BaseModel):
    by: str = Field(description="who finalises the sheet")


def create_app(store: ReviewStore, *, hosts: Optional[Iterable[str]] = None,
               max_body: int = guard.MAX_BODY_BYTES) -> FastAPI:
    """`hosts`: the Host names answered (default: loopback only, see guard.allowed_hosts);
    `max_body`: the request body cap in bytes."""
    # FastAPI's own /docs pulls Swagger UI from a CDN; this machine is offline, so /docs is
    # rendered here from the same OpenAPI document (also served raw at /openapi.json).
    app = FastAPI(title="skycity-bench review", version=__version__, docs_url=None, redoc_url=None,
                  description="Blind review of Sky City candidates: queue, scores, overrides, the sheet. "
                              "Candidates appear only under anonymous ids.")
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    guard.install(app, hosts if hosts is not None else guard.allowed_hosts(), max_body)
    rubric = store.rubric

    @app.exception_handler(InvalidReview)
    async def _invalid(request: Request, exc: InvalidReview):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        return templates.TemplateResponse(request, "error.html", {"message": str(exc), "rubric": rubric},
                                          status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse({"error": f"{where}: {first.get('msg', 'invalid request')}"}, status_code=422)

    def who(request: Request) -> Optional[str]:
        raw = request.cookies.get(COOKIE)
        return unquote(raw) if raw else None

    graded = {i.id for i in rubric.items if i.graded}

    def visible_sheets(request: Request):
        """All sheets; for a signed-in reviewer, the candidates they have not fully scored
        (and that are not finalised) show no reviewer-given values."""
        sheets = store.sheets()
        name = who(request)
        if not name:
            return sheets
        out = []
        for s in sheets:
            mine = {r.item_id for r in store.reviews(s.candidate_id, name) if r.kind == "grade"}
            out.append(s if s.finalized or graded <= mine else
                       hide_reviews(s, "hidden until you have scored this candidate"))
        return out

    # --- pages ----------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request):
        name = who(request)
        if name:
            return RedirectResponse("/queue", status_code=303)
        return templates.TemplateResponse(request, "signin.html", {"rubric": rubric, "reviewer": None})

    @app.post("/signin", include_in_schema=False)
    def signin(name: str = Form("")):
        me = store.sign_in(name)
        resp = RedirectResponse("/queue", status_code=303)
        resp.set_cookie(COOKIE, quote(me["name"]), httponly=True, samesite="strict")
        return resp

    @app.post("/signout", include_in_schema=False)
    def signout():
        resp = RedirectResponse("/", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp

    @app.get("/queue", response_class=HTMLResponse, include_in_schema=False)
    def queue(request: Request):
        name = who(request)
        if not name:
            return RedirectResponse("/", status_code=303)
        store.sign_in(name)   # a cookie from an older store signs in again
        return templates.TemplateResponse(request, "queue.html", {"rubric": rubric, "reviewer": name,
                                                                 "queue": store.queue(name)})

    def _page(request: Request, cid: str, name: str, error: str = "", saved: str = "", status: int = 200,
              start: Optional[float] = None):
        store.sign_in(name)   # a cookie from an older store signs in again
        if not store.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        sheet = store.sheet(cid)
        mine = store.reviews(cid, name)
        scored = {r.item_id for r in mine}
        wanted = [i.item_id for i in sheet.items if "needs third reviewer" in i.flags and i.item_id not in scored]
        view = candidate_view(rubric, cid, store.latest_run(cid), mine, wanted)
        return templates.TemplateResponse(request, "candidate.html", {
            "rubric": rubric, "reviewer": name, "v": view, "error": error, "saved": saved,
            "finalized": sheet.finalized, "start": start}, status_code=status)

    def _next_candidate(name: str, cid: str) -> Optional[str]:
        """The candidate after `cid` in this reviewer's queue order (None after the last)."""
        order = store.order_for(store.reviewer(name)["seat"])
        i = order.index(cid) if cid in order else len(order)
        return order[i + 1] if i + 1 < len(order) else None

    @app.get("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    def candidate_page(request: Request, cid: str):
        name = who(request)
        if not name:
            return RedirectResponse("/", status_code=303)
        from ..store.validate import check_candidate_id
        check_candidate_id(cid)
        return _page(request, cid, name, saved=request.query_params.get("saved", ""),
                     start=video_time(request.query_params.get("t")))

    @app.post("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    async def candidate_submit(request: Request, cid: str):
        name = who(request)
        if not name:
            return RedirectResponse("/", status_code=303)
        form = await request.form()
        if form.get("candidate") != cid:
            raise InvalidReview("the form's candidate id does not match the page: nothing stored", 422)
        grades, overrides = [], []
        for key, value in form.multi_items():
            if key.startswith("grade:") and value != "":
                iid = key[len("grade:"):]
                grades.append({"item": iid, "level": value, "comment": form.get(f"comment:{iid}", "")})
            elif key.startswith("override:") and str(value).strip() != "":
                iid = key[len("override:"):]
                overrides.append({"item": iid, "points": str(value).strip(), "reason": form.get(f"reason:{iid}", "")})
        then_next = form.get("then") == "next"
        try:
            if then_next and not grades and not overrides:     # "next" with nothing chosen: move on
                res = {"stored": 0}
            else:
                res = store.submit(cid, name, str(form.get("rubric_id", "")), grades, overrides, source="web")
        except InvalidReview as e:
            if e.status == 404:
                raise
            return _page(request, cid, name, error=f"{e} — nothing was stored", status=e.status)
        if then_next:       # "save & next": the next in this reviewer's queue, same video time
            nxt = _next_candidate(name, cid)
            if nxt is None:
                return RedirectResponse("/queue", status_code=303)
            t = video_time(form.get("video_t"))
            return RedirectResponse(f"/c/{nxt}?saved={res['stored']}" + (f"&t={t:g}" if t is not None else ""),
                                    status_code=303)
        return RedirectResponse(f"/c/{cid}?saved={res['stored']}", status_code=303)

    @app.get("/sheet", response_class=HTMLResponse, include_in_schema=False)
    def sheet_page(request: Request):
        sheets = visible_sheets(request)
        return templates.TemplateResponse(request, "sheet.html", {"rubric": rubric, "reviewer": who(request),
                                                                 "sheets": sheets, "ranking": rank(sheets),
                                                                 "agreement": agreement(sheets)})

    @app.get("/sheet.{fmt}", include_in_schema=False)
    def sheet_export(request: Request, fmt: Literal["md", "csv", "json"]):
        return _sheet_response(fmt, visible_sheets(request))

    @app.get("/files/{file_id}", include_in_schema=False)
    def run_file(file_id: str):
        f = store.file(guard.file_number(file_id))
        if f.is_text:
            return PlainTextResponse(store.mask_for_serving(f.read_bytes().decode("utf-8", errors="replace"), f.candidate_id),
                                     media_type=f.mime)
        # no filename in the headers: a file's name on disk is not the reviewers' business
        if f.path is None:            # kept in the database (a queue worker's run)
            return Response(f.data, media_type=f.mime, headers={"content-disposition": "inline"})
        return FileResponse(f.path, media_type=f.mime, content_disposition_type="inline", filename=None)

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request):
        spec = app.openapi()
        ops = [{"method": m.upper(), "path": path, **op} for path, item in spec["paths"].items()
               for m, op in item.items()]
        return templates.TemplateResponse(request, "api_docs.html", {
            "rubric": rubric, "reviewer": who(request), "ops": ops, "schemas": spec.get("components", {}).get("schemas", {}),
            "json": __import__("json")})

    # --- JSON API ---------------------------------------------------------------------
    def _sheet_response(fmt: str, sheets) -> Response:
        if fmt == "md":
            return PlainTextResponse(to_markdown(sheets, rank(sheets)), media_type="text/markdown; charset=utf-8")
        if fmt == "csv":
            return PlainTextResponse(to_csv(sheets), media_type="text/csv; charset=utf-8")
        return Response(to_json(sheets, rank(sheets)), media_type="application/json")

    @app.get("/api/rubric", tags=["rubric"], summary="The rubric in force: items, values, levels, wording")
    def api_rubric():
        return {**rubric.model_dump(mode="json"), "sha256": rubric.sha256}

    @app.post("/api/reviewers", tags=["reviewers"], summary="Sign in (creates the reviewer on first use)")
    def api_signin(body: SignIn):
        return store.sign_in(body.name)

    @app.get("/api/reviewers/{name}/queue", tags=["reviewers"],
             summary="The reviewer's queue: anonymous candidates in this reviewer's order")
    def api_queue(name: str):
        return store.queue(name)

    @app.get("/api/candidates", tags=["candidates"], summary="Anonymous candidate ids")
    def api_candidates():
        return store.candidates()

    @app.get("/api/candidates/{cid}", tags=["candidates"],
             summary="A candidate's latest run, blind: items, evidence, files by id")
    def api_candidate(cid: str):
        from ..store.validate import check_candidate_id
        check_candidate_id(cid)
        run = store.latest_run(cid)
        if run is None:
            raise InvalidReview(f"no such candidate: {cid}", 404)
        for f in run["files"]:
            f["url"] = f"/files/{f['id']}"
        # the candidate block shows its anonymous id only: a full file hash (or size) would let
        # anyone holding the demo files tell which one this is (a copy: the report may be shared)
        cand = run["report"].get("candidate") or {}
        doc = {**run, "report": {**run["report"], "candidate": {"id": cand.get("id", cid)}}}
        # serialised directly: FastAPI's jsonable_encoder walks every value of a ~5 MB report
        # again (over a second at 50 candidates); the report is plain JSON already
        return Response(json.dumps(doc, ensure_ascii=False, default=str), media_type="application/json")

    @app.get("/api/candidates/{cid}/reviews", tags=["reviews"],
             summary="One reviewer's own standing scores of a candidate (never other reviewers')")
    def api_my_reviews(cid: str, reviewer: str):
        store.reviewer(reviewer)
        return [r.__dict__ for r in store.reviews(cid, reviewer)]

    @app.post("/api/candidates/{cid}/reviews", tags=["reviews"], status_code=201,
              summary="Submit scores: levels for manual/assisted items, overrides (with reason) for automated ones")
    def api_submit(cid: str, body: Submission = Body(...)):
        return store.submit(cid, body.reviewer, body.rubric_id, [g.model_dump() for g in body.grades],
                            [o.model_dump() for o in body.overrides], source="api")

    @app.post("/api/candidates/{cid}/finalize", tags=["reviews"], summary="Finalise a candidate's sheet")
    def api_finalize(cid: str, body: Finalize):
        store.finalize(cid, body.by)
        return {"finalized": cid}

    @app.get("/api/sheet", tags=["sheet"], summary="The 100-point sheet of every candidate (blind)")
    def api_sheet(request: Request, format: Literal["json", "md", "csv"] = "json"):  # noqa: A002
        return _sheet_response(format, visible_sheets(request))

    return app
