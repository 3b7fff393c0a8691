"""The leaderboard for admins: the page /admin/leaderboard (the table of systems, the figure,
the pairwise differences) and its JSON twin /api/admin/leaderboard, the document
`skycity-bench leaderboard --db STORE --format json` writes. Admins only: the table names the
systems, which reviewers must never learn (store/manifests.py).

The numbers come from store/leaderboard_rows.store_board, as the CLI's do; a store that cannot
give a leaderboard yet (no manifest, one prompt, nothing finalised, unlike environments)
answers 409 with the same one-line reason. `allow_mixed_env=1` ranks unlike environments
anyway, and the page and the JSON then say so."""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import Any, Optional

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from skycity_bench.common.errors import UserError

# imported with the app, not on the first page view: matplotlib's import is half a second of
# CPU, once per server, which the first admin's page would otherwise wait for
from skycity_bench.media.leaderboard_figure import leaderboard_png
from skycity_bench.review.auth import Principal
from skycity_bench.review.context import ReviewContext
from skycity_bench.store.leaderboard_rows import StoreBoard, store_board
from skycity_bench.store.validate import InvalidReview

# one system's figure data: system, mean, interval, the candidates' dots (hashable)
FigureRow = tuple[str, Optional[float], Optional[tuple[float, float]], tuple[float, ...]]


@lru_cache(maxsize=8)
def _figure_url(rows: tuple[FigureRow, ...]) -> str:
    """The figure of these numbers as a data: URL (the page's policy allows data: images,
    nothing else inline); the same numbers draw the same bytes, so it is drawn once until a
    number changes (a finalised sheet), not on every view."""
    png = leaderboard_png(
        [{"system": s, "mean": mean, "ci": ci, "candidates": list(dots)} for s, mean, ci, dots in rows]
    )
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _figure(res: StoreBoard) -> str:
    rows = tuple(
        (s.system, s.total.mean, None if s.total.ci is None else tuple(s.total.ci), tuple(s.candidates))
        for s in res.board.systems
    )
    return _figure_url(rows)


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()
    auth, store = ctx.auth, ctx.store

    @router.get("/admin/leaderboard", response_class=HTMLResponse, include_in_schema=False)
    def leaderboard_page(request: Request, allow_mixed_env: bool = Query(False), me: Principal = Depends(auth.admin)):
        values: dict[str, Any] = {"reviewer": me.name, "refused": None, "allow_mixed_env": allow_mixed_env}
        try:
            res = store_board(store, allow_mixed_env=allow_mixed_env)
        except UserError as e:
            return ctx.page(request, "leaderboard.html", {**values, "refused": str(e)}, status=409)
        values.update(doc=res.to_dict(), figure=_figure(res))
        return ctx.page(request, "leaderboard.html", values)

    @router.get(
        "/api/admin/leaderboard",
        tags=["admin"],
        summary="The leaderboard: each system's mean total, 95 % interval, rank range; paired differences",
    )
    def api_leaderboard(allow_mixed_env: bool = Query(False), me: Principal = Depends(auth.admin)):
        try:
            return store_board(store, allow_mixed_env=allow_mixed_env).to_dict()
        except UserError as e:
            raise InvalidReview(str(e), 409) from None

    return router


__all__ = ["build"]
