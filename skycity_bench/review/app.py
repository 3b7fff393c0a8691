"""The reviewers' web app (FastAPI + Jinja2) and its JSON API (documented at /docs).

Blind by construction: pages and API answers are built only from the store's blind views
(anonymous ids, masked reports, files by number); the id ↔ label table is never read here,
so nothing this app serves can unblind a candidate but the admin's audited unblinded sheet.
Who may see and do what is decided per route by review/auth.py (accounts, sessions, API
tokens, CSRF; every route declares its rule): a reviewer sees only their own scores until a
sheet is finalised; an admin invites, finalises and un-finalises, unblinds.

This module only wires the app together; the routes live in one module per area:
routes_signin (sign-in and the account's page), routes_reviewing (queue, candidate pages,
sheet, files and their JSON API), routes_admin (team, finalising, unblinding, audit),
routes_calibration (calibration and agreement), routes_runs (run choice and thumbnails),
routes_timings (time per candidate) and routes_docs (the API's documentation).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path
from typing import Optional

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from skycity_bench import __version__
from skycity_bench.review import (
    error_pages,
    guard,
    routes_admin,
    routes_calibration,
    routes_docs,
    routes_leaderboard,
    routes_reviewing,
    routes_runs,
    routes_signin,
    routes_timings,
)
from skycity_bench.review.auth import Auth
from skycity_bench.review.context import ReviewContext
from skycity_bench.review.timing import OpenedStamp
from skycity_bench.store import accounts
from skycity_bench.store.review_store import ReviewStore

HERE = Path(__file__).resolve().parent
DESCRIPTION = (
    "Blind review of Sky City candidates: queue, scores, overrides, the sheet. "
    "Candidates appear only under anonymous ids. Authenticate with "
    "`Authorization: Bearer <token>` (a personal API token, made on /me)."
)
# the route modules, in the order their routes are matched and listed in the API document
AREAS = (
    routes_signin,
    routes_reviewing,
    routes_docs,
    routes_admin,
    routes_calibration,
    routes_runs,
    routes_timings,
    routes_leaderboard,
)


def create_app(
    store: ReviewStore, *, hosts: Optional[Iterable[str]] = None, max_body: int = guard.MAX_BODY_BYTES
) -> FastAPI:
    """`hosts`: the Host names answered (default: loopback only, see guard.allowed_hosts);
    `max_body`: the request body cap in bytes. Every route declares its role rule through
    the auth dependency it uses (review/auth.py); `app.state.auth` is the app's Auth."""
    auth = Auth(store)
    # FastAPI's own /docs and /openapi.json are off: routes_docs serves both, to signed-in
    # accounts. The app-wide gate refuses any route that declares no role rule (fail closed).
    app = FastAPI(
        title="skycity-bench review",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(auth.gate)],
        description=DESCRIPTION,
    )
    templates = Jinja2Templates(directory=str(HERE / "templates"), context_processors=[auth.template_context])
    for name in templates.env.list_templates(extensions=["html"]):  # compiled once, here, not by
        templates.env.get_template(name)  # each page's first request (20-40 ms of CPU a page)
    ctx = ReviewContext(store, auth, templates, OpenedStamp(accounts.secret_key(store)))
    app.state.auth = auth
    app.state.store = store
    app.state.templates = templates
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    auth.declare("/static", "public")  # the style sheet and scripts of the sign-in page too
    guard.install(app, hosts if hosts is not None else guard.allowed_hosts(), max_body)
    error_pages.install(app, ctx)
    for area in AREAS:
        app.include_router(area.build(ctx))
    return app


def settle_before_serving(app: FastAPI) -> None:
    """Called once, with every route in place, right before the app is served. The API's
    OpenAPI document, fixed once the routes are, is built now (FastAPI keeps it), not by the
    first /docs. Then what exists (the app, its routes and templates, every module it
    imported) lives as long as the process, so it is moved out of the cyclic garbage
    collector's reach (gc.freeze): a full collection skips it. At a round's size a walk over
    it takes 100-400 ms, a stall for whichever request sets it off. Garbage is collected
    first, so none is kept."""
    app.openapi()
    gc.collect()
    gc.freeze()


__all__ = ["create_app", "settle_before_serving"]
