"""The queue's progress in the review app: `/progress` (a page that refreshes
itself) and `/api/queue/status` (JSON), the same figures as `queue status`. Mounted by
`skycity-bench review` when the store is a PostgreSQL database (install below). Blind like
the rest of the app: candidates by anonymous id, machines by worker name, no labels."""

from __future__ import annotations

import html

from fastapi import Depends, FastAPI
from fastapi.responses import HTMLResponse

from skycity_bench.queue.status import render, status
from skycity_bench.store.review_store import ReviewStore

REFRESH_S = 10


def install(app: FastAPI, store: ReviewStore) -> None:
    # the operator's view: admins only (review/auth.py; every route of the app declares its rule)
    admin = [Depends(app.state.auth.admin)]

    @app.get("/progress", response_class=HTMLResponse, include_in_schema=False, dependencies=admin)
    def progress_page():
        st = status(store)
        return HTMLResponse(
            f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="{REFRESH_S}"><title>queue progress · skycity-bench</title>'
            f'<link rel="stylesheet" href="/static/style.css"></head><body><main>'
            f"<h1>Queue progress</h1><p>as of {html.escape(st['at'])} (refreshes every {REFRESH_S} s)</p>"
            f'<pre class="queue-status">{html.escape(render(st))}</pre></main></body></html>'
        )

    @app.get(
        "/api/queue/status",
        tags=["queue"],
        dependencies=admin,
        summary="Queued / running (worker, probe, since) / done / failed per tag, throughput, ETA",
    )
    def api_queue_status():
        return status(store)
