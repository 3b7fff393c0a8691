"""The reviewers' web app (FastAPI + Jinja2) and its JSON API (documented at /docs).

Blind by construction: pages and API answers are built only from the store's blind views
(anonymous ids, masked reports, files by number); the id ↔ label table is never read here,
so nothing this app serves can unblind a candidate but the admin's audited unblinded sheet.
Who may see and do what is decided per route by review/auth.py (accounts, sessions, API
tokens, CSRF; every route declares its rule): a reviewer sees only their own scores until a
sheet is finalised; an admin invites, finalises and un-finalises, unblinds.
Every write goes through ReviewStore.submit, which validates the whole submission before storing
any of it, in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Literal, Optional
from urllib.parse import urlsplit

from fastapi import Body, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench import __version__
from skycity_bench.analysis.agreement import agreement
from skycity_bench.judging.sheet_totals import hide_reviews, rank, to_csv, to_json, to_markdown
from skycity_bench.review import guard, routes_admin, routes_runs, routes_timings, timing
from skycity_bench.review.auth import API_TOKEN_TTL_S, INVITE_TTL_S, Auth, Forbidden, NoRule, NotSignedIn, Principal
from skycity_bench.review.views import candidate_view, video_time
from skycity_bench.store import accounts, timings
from skycity_bench.store.anchors import Calibration, still_open
from skycity_bench.store.review_store import ReviewStore
from skycity_bench.store.validate import InvalidReview

HERE = Path(__file__).resolve().parent


class Grade(BaseModel):
    item: str = Field(description="a manual or assisted item id, e.g. camera.motion")
    level: Optional[str | int] = Field(
        None, description="level key (excellent|good|fair|poor|missing), 优秀…缺失, or percent 100|75|50|25|0"
    )
    points: Optional[float] = Field(None, description="alternatively the points: one level's share × the item's value")
    comment: str = ""


class Override(BaseModel):
    item: str = Field(description="an automated item id, e.g. shops.touch")
    points: float = Field(description="the reviewer's points, on the rubric's half-point grid")
    reason: str = Field(description="why the bench's value is overridden (required, kept and shown)")
    comment: str = ""


class Submission(BaseModel):
    # the reviewer is the signed-in account (bearer token or session), never the body: a
    # body that still names one (`reviewer`, `by`) is refused (422), not silently re-attributed
    model_config = ConfigDict(extra="forbid")
    rubric_id: str = Field(description="the rubric the scores were given under; must be the store's")
    grades: list[Grade] = Field(default_factory=list)
    overrides: list[Override] = Field(default_factory=list)


class Finalize(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field("", description="why (kept in the audit trail); required with force")
    force: bool = Field(False, description="finalise although items are still missing (needs a reason)")


class Unfinalize(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(description="why the sheet is opened again (required; kept in the audit trail)")


class Invitation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="the new reviewer's name (shown on the sheet; decides nothing else)")
    role: Literal["reviewer", "admin"] = "reviewer"


def create_app(
    store: ReviewStore, *, hosts: Optional[Iterable[str]] = None, max_body: int = guard.MAX_BODY_BYTES
) -> FastAPI:
    """`hosts`: the Host names answered (default: loopback only, see guard.allowed_hosts);
    `max_body`: the request body cap in bytes. Every route declares its role rule through
    the auth dependency it uses (review/auth.py); `app.state.auth` is the app's Auth."""
    auth = Auth(store)
    # FastAPI's own /docs pulls Swagger UI from a CDN; this machine is offline, so /docs is
    # rendered here from the same OpenAPI document (served raw at /openapi.json, to
    # signed-in accounts like every other route but the sign-in pages). The app-wide gate
    # refuses any route that declares no role rule (fail closed).
    app = FastAPI(
        title="skycity-bench review",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(auth.gate)],
        description="Blind review of Sky City candidates: queue, scores, overrides, the sheet. "
        "Candidates appear only under anonymous ids. Authenticate with "
        "`Authorization: Bearer <token>` (a personal API token, made on /me).",
    )
    app.state.auth = auth
    app.state.store = store
    stamp = timing.OpenedStamp(accounts.secret_key(store))  # a page's opening time, signed (time per candidate)
    templates = Jinja2Templates(directory=str(HERE / "templates"), context_processors=[auth.template_context])
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    auth.declare("/static", "public")  # the style sheet and scripts of the sign-in page too
    guard.install(app, hosts if hosts is not None else guard.allowed_hosts(), max_body)
    rubric = store.rubric

    def _is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"

    @app.exception_handler(InvalidReview)
    async def _invalid(request: Request, exc: InvalidReview):
        if _is_api(request):
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        return templates.TemplateResponse(
            request, "error.html", {"message": str(exc), "rubric": rubric}, status_code=exc.status
        )

    @app.exception_handler(NotSignedIn)
    async def _not_signed_in(request: Request, exc: NotSignedIn):
        if _is_api(request):
            return JSONResponse({"error": exc.detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return RedirectResponse("/", status_code=303)

    async def _forbidden(request: Request, exc: Forbidden):
        if _is_api(request):
            return JSONResponse({"error": exc.detail}, status_code=403)
        return templates.TemplateResponse(
            request, "error.html", {"message": exc.detail, "rubric": rubric}, status_code=403
        )

    app.add_exception_handler(Forbidden, _forbidden)
    app.add_exception_handler(NoRule, _forbidden)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        msg = first.get("msg", "invalid request")
        if first.get("type") == "extra_forbidden" and where in ("body.reviewer", "body.by"):
            msg = "not accepted: the reviewer is the signed-in account (API token or session), never the body"
        return JSONResponse({"error": f"{where}: {msg}"}, status_code=422)

    app.state.templates = templates

    def visible_sheets(me: Principal, *, unblind: bool = False):
        """The sheets as this account may see them: an admin, everything; a reviewer, every
        other reviewer's values only once the candidate's sheet is finalised (before that a
        reviewer who read the others' scores could revise their own)."""
        sheets = store.sheets(unblind=unblind and me.is_admin)
        if me.is_admin:  # a calibration-flagged reviewer's scores marked (they still count)
            return Calibration(store).mark(sheets)
        # a finalised anchor this reviewer still has to score looks like any open candidate
        still = still_open(store, me.id)
        return [
            s
            if s.finalized and s.candidate_id not in still
            else hide_reviews(
                replace(s, finalized=False),
                "hidden until the sheet is finalised (your own scores are on the candidate page)",
            )
            for s in sheets
        ]

    # --- sign in / out (the only pages anonymous visitors see) ---------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request, me: Optional[Principal] = Depends(auth.principal_or_none)):
        if me is not None:
            return RedirectResponse("/queue", status_code=303)
        return templates.TemplateResponse(request, "signin.html", {"rubric": rubric, "reviewer": None})

    def _link_page(request: Request, token: str, status: int = 200):
        acc = accounts.peek(store, token)
        if acc is None:
            return templates.TemplateResponse(
                request,
                "signin.html",
                {
                    "rubric": rubric,
                    "reviewer": None,
                    "error": "This link is not valid: unknown, expired, already used or revoked. Ask your admin for "
                    "a new one.",
                },
                status_code=410,
            )
        return templates.TemplateResponse(
            request,
            "signin.html",
            {"rubric": rubric, "reviewer": None, "link_for": acc["name"], "token": token},
            status_code=status,
        )

    @app.get(
        "/signin/{token}", response_class=HTMLResponse, include_in_schema=False, dependencies=[Depends(auth.public)]
    )
    def signin_link(request: Request, token: str):
        """The link's page: a button signs in. A GET never uses the one-time link up (mail
        scanners and link previews fetch links)."""
        return _link_page(request, token)

    @app.post("/signin/{token}", include_in_schema=False, dependencies=[Depends(auth.public)])
    def signin(request: Request, token: str):
        # login CSRF: a foreign page must not sign a reviewer's browser into another account
        # (its own link); a browser's POST names its page's origin, which must be this host
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
            raise Forbidden("sign-in from another site refused: open the link itself")
        acc = accounts.redeem(store, token)
        if acc is None:
            return _link_page(request, token)
        resp = RedirectResponse("/queue", status_code=303)
        auth.set_session(resp, request, acc["id"])
        return resp

    @app.post("/signout", include_in_schema=False)
    def signout(request: Request, me: Principal = Depends(auth.reviewer)):
        auth.end_session(request)
        resp = RedirectResponse("/", status_code=303)
        auth.clear_session(resp)
        return resp

    # --- pages ----------------------------------------------------------------------
    @app.get("/queue", response_class=HTMLResponse, include_in_schema=False)
    def queue(request: Request, me: Principal = Depends(auth.reviewer)):
        return templates.TemplateResponse(
            request, "queue.html", {"rubric": rubric, "reviewer": me.name, "queue": store.queue(me.name)}
        )

    def _page(
        request: Request,
        cid: str,
        name: str,
        error: str = "",
        saved: str = "",
        status: int = 200,
        start: Optional[float] = None,
        opened: Optional[str] = None,
    ):
        if not store.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        sheet = store.sheet(cid)
        mine = store.reviews(cid, name)
        scored = {r.item_id for r in mine}
        wanted = [i.item_id for i in sheet.items if "needs third reviewer" in i.flags and i.item_id not in scored]
        view = candidate_view(rubric, cid, store.latest_run(cid), mine, wanted)
        return templates.TemplateResponse(
            request,
            "candidate.html",
            {
                "rubric": rubric,
                "reviewer": name,
                "v": view,
                "error": error,
                "saved": saved,
                "finalized": sheet.finalized and cid not in still_open(store, store.reviewer(name)["id"]),
                "start": start,
                "opened": opened or stamp.issue(name, cid),
            },
            status_code=status,
        )

    def _next_candidate(name: str, cid: str) -> Optional[str]:
        """The candidate after `cid` in this reviewer's queue order (None after the last)."""
        order = store.order_for(store.reviewer(name)["seat"])
        i = order.index(cid) if cid in order else len(order)
        return order[i + 1] if i + 1 < len(order) else None

    @app.get("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    def candidate_page(request: Request, cid: str, me: Principal = Depends(auth.reviewer)):
        from skycity_bench.store.validate import check_candidate_id

        check_candidate_id(cid)
        return _page(
            request,
            cid,
            me.name,
            saved=request.query_params.get("saved", ""),
            start=video_time(request.query_params.get("t")),
        )

    @app.post("/c/{cid}", response_class=HTMLResponse, include_in_schema=False)
    async def candidate_submit(request: Request, cid: str, me: Principal = Depends(auth.reviewer)):
        name = me.name
        form = await request.form()
        if form.get("candidate") != cid:
            raise InvalidReview("the form's candidate id does not match the page: nothing stored", 422)
        grades, overrides = [], []
        for key, value in form.multi_items():
            if key.startswith("grade:") and value != "":
                iid = key[len("grade:") :]
                grades.append({"item": iid, "level": value, "comment": form.get(f"comment:{iid}", "")})
            elif key.startswith("override:") and str(value).strip() != "":
                iid = key[len("override:") :]
                overrides.append({"item": iid, "points": str(value).strip(), "reason": form.get(f"reason:{iid}", "")})
        then_next = form.get("then") == "next"
        try:
            if then_next and not grades and not overrides:  # "next" with nothing chosen: move on
                res = {"stored": 0}
            else:
                res = store.submit(cid, name, str(form.get("rubric_id", "")), grades, overrides, source="web")
        except InvalidReview as e:
            if e.status == 404:
                raise
            kept = form.get(timing.FIELD) if stamp.opened_at(form.get(timing.FIELD), name, cid) else None
            return _page(request, cid, name, error=f"{e} — nothing was stored", status=e.status, opened=kept)
        if "review_ids" in res:  # saved from the page: time since the server opened it (store/timings.py)
            opened_at = stamp.opened_at(form.get(timing.FIELD), name, cid)
            if opened_at:
                timings.record(store, name, cid, opened_at, timing.now())
        if then_next:  # "save & next": the next in this reviewer's queue, same video time
            nxt = _next_candidate(name, cid)
            if nxt is None:
                return RedirectResponse("/queue", status_code=303)
            t = video_time(form.get("video_t"))
            return RedirectResponse(
                f"/c/{nxt}?saved={res['stored']}" + (f"&t={t:g}" if t is not None else ""), status_code=303
            )
        return RedirectResponse(f"/c/{cid}?saved={res['stored']}", status_code=303)

    @app.get("/sheet", response_class=HTMLResponse, include_in_schema=False)
    def sheet_page(request: Request, me: Principal = Depends(auth.reviewer)):
        sheets = visible_sheets(me)
        return templates.TemplateResponse(
            request,
            "sheet.html",
            {
                "rubric": rubric,
                "reviewer": me.name,
                "sheets": sheets,
                "ranking": rank(sheets),
                "agreement": agreement(sheets),
            },
        )

    @app.get("/sheet.{fmt}", include_in_schema=False)
    def sheet_export(fmt: Literal["md", "csv", "json"], me: Principal = Depends(auth.reviewer)):
        return _sheet_response(fmt, visible_sheets(me))

    @app.get("/files/{file_id}", include_in_schema=False, dependencies=[Depends(auth.reviewer)])
    def run_file(file_id: str):
        f = store.file(guard.file_number(file_id))
        if f.is_text:
            return PlainTextResponse(
                store.mask_for_serving(f.read_bytes().decode("utf-8", errors="replace"), f.candidate_id),
                media_type=f.mime,
            )
        # no filename in the headers: a file's name on disk is not the reviewers' business
        if f.path is None:  # kept in the database (a queue worker's run)
            return Response(f.data, media_type=f.mime, headers={"content-disposition": "inline"})
        return FileResponse(f.path, media_type=f.mime, content_disposition_type="inline", filename=None)

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request, me: Principal = Depends(auth.reviewer)):
        spec = app.openapi()
        ops = [
            {"method": m.upper(), "path": path, **op} for path, item in spec["paths"].items() for m, op in item.items()
        ]
        return templates.TemplateResponse(
            request,
            "api_docs.html",
            {
                "rubric": rubric,
                "reviewer": me.name,
                "ops": ops,
                "schemas": spec.get("components", {}).get("schemas", {}),
                "json": __import__("json"),
            },
        )

    @app.get("/openapi.json", include_in_schema=False, dependencies=[Depends(auth.reviewer)])
    def openapi_json():
        return JSONResponse(app.openapi())

    # --- the account's own page: API tokens ------------------------------------------------
    @app.get("/me", response_class=HTMLResponse, include_in_schema=False)
    def me_page(request: Request, me: Principal = Depends(auth.reviewer)):
        return templates.TemplateResponse(
            request,
            "me.html",
            {"rubric": rubric, "reviewer": me.name, "tokens": accounts.tokens(store, me.id), "new": None},
        )

    @app.post("/me/tokens", response_class=HTMLResponse, include_in_schema=False)
    def me_new_token(request: Request, me: Principal = Depends(auth.reviewer)):
        token = accounts.issue(store, me.id, "api", by=me.name, ttl_s=API_TOKEN_TTL_S)
        return templates.TemplateResponse(
            request,
            "me.html",
            {"rubric": rubric, "reviewer": me.name, "tokens": accounts.tokens(store, me.id), "new": token},
        )

    @app.post("/me/tokens/{tid}/revoke", include_in_schema=False)
    def me_revoke_token(tid: int, me: Principal = Depends(auth.reviewer)):
        accounts.revoke(store, tid, me.id)
        return RedirectResponse("/me", status_code=303)

    # --- the admin's team page: accounts, invitations, finalising, the audit trail ----------------
    def _team(request: Request, me: Principal, new_link: Optional[dict] = None, error: str = "", status: int = 200):
        return templates.TemplateResponse(
            request,
            "team.html",
            {
                "rubric": rubric,
                "reviewer": me.name,
                "accounts": accounts.accounts(store),
                "links": accounts.invitations(store)[:50],
                "audit": accounts.audit_rows(store, 100),
                "sheets": [(c, c in fin) for fin in [store.finalized_ids()] for c in store.candidates()],
                "new_link": new_link,
                "error": error,
            },
            status_code=status,
        )

    def _invite(request: Request, me: Principal, name: str, role: str) -> dict:
        acc = accounts.create_account(store, name, role, by=me.name)
        token = accounts.issue(store, acc["id"], "invite", by=me.name, ttl_s=INVITE_TTL_S)
        accounts.audit(store, me.name, "invite", None, {"name": acc["name"], "role": acc["role"]})
        return {
            "name": acc["name"],
            "role": acc["role"],
            "link": str(request.base_url).rstrip("/") + f"/signin/{token}",
            "expires_in_s": INVITE_TTL_S,
        }

    @app.get("/team", response_class=HTMLResponse, include_in_schema=False)
    def team_page(request: Request, me: Principal = Depends(auth.admin)):
        return _team(request, me)

    @app.post("/team/invite", response_class=HTMLResponse, include_in_schema=False)
    async def team_invite(request: Request, me: Principal = Depends(auth.admin)):
        form = await request.form()
        try:
            link = _invite(
                request, me, str(form.get("name", "")), "admin" if form.get("role") == "admin" else "reviewer"
            )
        except InvalidReview as e:
            return _team(request, me, error=str(e), status=e.status)
        return _team(request, me, new_link=link)

    @app.post("/team/disable", include_in_schema=False)
    async def team_disable(request: Request, me: Principal = Depends(auth.admin)):
        name = str((await request.form()).get("name", ""))  # a form field: a name may hold "/"
        if name == me.name:
            raise InvalidReview("you cannot disable your own account", 409)
        accounts.disable(store, name, by=me.name)
        return RedirectResponse("/team", status_code=303)

    @app.post("/team/finalize/{cid}", include_in_schema=False)
    async def team_finalize(request: Request, cid: str, me: Principal = Depends(auth.admin)):
        form = await request.form()
        _finalize(cid, me, Finalize(reason=str(form.get("reason", "")), force=form.get("force") == "1"))
        return RedirectResponse("/team", status_code=303)

    @app.post("/team/unfinalize/{cid}", include_in_schema=False)
    async def team_unfinalize(request: Request, cid: str, me: Principal = Depends(auth.admin)):
        form = await request.form()
        accounts.unfinalize(store, cid, by=me.name, reason=str(form.get("reason", "")))
        return RedirectResponse("/team", status_code=303)

    def _finalize(cid: str, me: Principal, body: Finalize) -> bool:
        from skycity_bench.store.validate import check_candidate_id

        check_candidate_id(cid)
        if not store.has_candidate(cid):
            raise InvalidReview(f"no such candidate: {cid}", 404)
        sheet = store.sheet(cid)
        if sheet.total is None and not body.force:
            raise InvalidReview(
                f"{cid}: {len(sheet.missing)} item(s) still missing; finalise anyway with force and a reason", 409
            )
        if body.force and not body.reason.strip():
            raise InvalidReview("finalising with items missing needs a reason", 422)
        return accounts.finalize(store, cid, by=me.name, reason=body.reason.strip())

    # --- JSON API ---------------------------------------------------------------------
    def _sheet_response(fmt: str, sheets) -> Response:
        if fmt == "md":
            return PlainTextResponse(to_markdown(sheets, rank(sheets)), media_type="text/markdown; charset=utf-8")
        if fmt == "csv":
            return PlainTextResponse(to_csv(sheets), media_type="text/csv; charset=utf-8")
        return Response(to_json(sheets, rank(sheets)), media_type="application/json")

    @app.get(
        "/api/rubric",
        tags=["rubric"],
        summary="The rubric in force: items, values, levels, wording",
        dependencies=[Depends(auth.reviewer)],
    )
    def api_rubric():
        return {**rubric.model_dump(mode="json"), "sha256": rubric.sha256}

    @app.get("/api/me", tags=["reviewers"], summary="Who the token or session belongs to")
    def api_me(me: Principal = Depends(auth.reviewer)):
        return {"name": me.name, "role": me.role}

    @app.post(
        "/api/me/tokens",
        tags=["reviewers"],
        status_code=201,
        summary="A new personal API token (shown once; stored only hashed)",
    )
    def api_new_token(me: Principal = Depends(auth.reviewer)):
        token = accounts.issue(store, me.id, "api", by=me.name, ttl_s=API_TOKEN_TTL_S)
        return {"token": token, "expires_in_s": API_TOKEN_TTL_S}

    @app.get("/api/me/queue", tags=["reviewers"], summary="Your queue: anonymous candidates in your order")
    def api_my_queue(me: Principal = Depends(auth.reviewer)):
        return store.queue(me.name)

    @app.get(
        "/api/reviewers/{name}/queue",
        tags=["reviewers"],
        summary="A reviewer's queue: anonymous candidates in their order (your own; an admin any)",
    )
    def api_queue(name: str, me: Principal = Depends(auth.reviewer)):
        if name != me.name and not me.is_admin:
            raise Forbidden("a reviewer sees their own queue only")
        return store.queue(name)

    @app.get(
        "/api/candidates", tags=["candidates"], summary="Anonymous candidate ids", dependencies=[Depends(auth.reviewer)]
    )
    def api_candidates():
        return store.candidates()

    @app.get(
        "/api/candidates/{cid}",
        tags=["candidates"],
        dependencies=[Depends(auth.reviewer)],
        summary="A candidate's shown run (the admin's pick, else the most complete), blind: items, evidence, files by id",
    )
    def api_candidate(cid: str):
        from skycity_bench.store.validate import check_candidate_id

        check_candidate_id(cid)
        # the report as masked at import (its candidate block is the anonymous id only: no full
        # file hash), sent as stored around the file list: a report is megabytes, never parsed here
        text = store.shown_run_json(cid)
        if text is None:
            raise InvalidReview(f"no such candidate: {cid}", 404)
        return Response(text, media_type="application/json")

    @app.get(
        "/api/candidates/{cid}/reviews",
        tags=["reviews"],
        summary="Your own standing scores of a candidate (an admin may name another reviewer)",
    )
    def api_my_reviews(cid: str, reviewer: Optional[str] = None, me: Principal = Depends(auth.reviewer)):
        if reviewer is not None and reviewer != me.name and not me.is_admin:
            raise Forbidden("a reviewer sees their own scores only")
        return [r.__dict__ for r in store.reviews(cid, reviewer if me.is_admin and reviewer else me.name)]

    @app.post(
        "/api/candidates/{cid}/reviews",
        tags=["reviews"],
        status_code=201,
        summary="Submit your scores: levels for manual/assisted items, overrides (with reason) for automated ones",
    )
    def api_submit(cid: str, body: Submission = Body(...), me: Principal = Depends(auth.reviewer)):
        return store.submit(
            cid,
            me.name,
            body.rubric_id,
            [g.model_dump() for g in body.grades],
            [o.model_dump() for o in body.overrides],
            source="api",
        )

    @app.post(
        "/api/candidates/{cid}/finalize",
        tags=["admin"],
        summary="Finalise a candidate's sheet (admin; refused while items are missing unless forced)",
    )
    def api_finalize(cid: str, body: Optional[Finalize] = None, me: Principal = Depends(auth.admin)):
        return {"finalized": cid, "changed": _finalize(cid, me, body or Finalize())}

    @app.post(
        "/api/candidates/{cid}/unfinalize",
        tags=["admin"],
        summary="Open a finalised sheet again (admin; reason required, audited)",
    )
    def api_unfinalize(cid: str, body: Unfinalize, me: Principal = Depends(auth.admin)):
        return {"unfinalized": cid, "changed": accounts.unfinalize(store, cid, by=me.name, reason=body.reason)}

    @app.get(
        "/api/sheet",
        tags=["sheet"],
        summary="The 100-point sheet of every candidate (blind; a reviewer sees others' values once final)",
    )
    def api_sheet(format: Literal["json", "md", "csv"] = "json", me: Principal = Depends(auth.reviewer)):  # noqa: A002
        return _sheet_response(format, visible_sheets(me))

    @app.get(
        "/api/admin/unblinded-sheet", tags=["admin"], summary="The sheet with the candidates' labels (admin; audited)"
    )
    def api_unblind(format: Literal["json", "md", "csv"] = "json", me: Principal = Depends(auth.admin)):  # noqa: A002
        accounts.audit(store, me.name, "unblind", None, {"format": format})
        return _sheet_response(format, visible_sheets(me, unblind=True))

    @app.post(
        "/api/admin/invitations",
        tags=["admin"],
        status_code=201,
        summary="Invite a reviewer: a personal one-time sign-in link (shown once; stored only hashed)",
    )
    def api_invite(request: Request, body: Invitation, me: Principal = Depends(auth.admin)):
        return _invite(request, me, body.name, body.role)

    @app.get("/api/admin/accounts", tags=["admin"], summary="Every account and its role (admin)")
    def api_accounts(me: Principal = Depends(auth.admin)):
        return [
            {k: a[k] for k in ("name", "role", "seat", "created_at", "disabled_at")} for a in accounts.accounts(store)
        ]

    @app.get("/api/admin/audit", tags=["admin"], summary="The audit trail of admin actions, newest first (admin)")
    def api_audit(me: Principal = Depends(auth.admin)):
        return accounts.audit_rows(store)

    app.include_router(routes_admin.build(store, auth, templates))  # /admin/calibration, /admin/agreement
    app.include_router(routes_runs.build(store, auth, templates))  # /thumbs/{id}, /admin/runs: run choice
    app.include_router(routes_timings.build(store, auth, templates))  # /admin/timings: time per candidate
    return app
