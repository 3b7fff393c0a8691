"""Time per candidate for the operator: the admin's page /admin/timings and
its JSON twin /api/admin/timings — per reviewer, the median time a candidate took them (from
the page's server-side opening to the save, store/timings.py), the total, and each candidate's
time. Admins only: how fast a colleague scores is not the other reviewers' business."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from skycity_bench.review.auth import Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.store import timings


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    auth, store = ctx.auth, ctx.store

    @router.get("/admin/timings", response_class=HTMLResponse, include_in_schema=False)
    def timings_page(request: Request, me: Principal = Depends(auth.admin)):
        return ctx.page(request, "timings.html", {"reviewer": me.name, "summary": timings.summary(store)})

    @router.get(
        "/api/admin/timings",
        tags=["admin"],
        summary="Time per candidate per reviewer: the median, the total, each candidate's seconds",
    )
    def api_timings(me: Principal = Depends(auth.admin)):
        return {"reviewers": timings.summary(store)}

    return router


__all__ = ["build"]
