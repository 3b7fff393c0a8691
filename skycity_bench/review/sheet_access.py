"""The sheets as an account may see them, and the sheet as a file (Markdown, CSV, JSON).

An admin sees everything, with a calibration-flagged reviewer's scores marked (they still
count). A reviewer sees every other reviewer's values only once a candidate's sheet is
finalised: before that, a reviewer who read the others' scores could revise their own, so
their sheet of it is built from their own work alone: no other grade, no other override (an
automated item shows the bench's value unless they overrode it), no count of reviewers. A
finalised anchor that this reviewer still scores blind looks like any open candidate."""

from __future__ import annotations

from fastapi.responses import PlainTextResponse
from starlette.responses import Response

from skycity_bench.judging.sheet_totals import CandidateSheet, rank, to_csv, to_json, to_markdown
from skycity_bench.review.auth import Principal
from skycity_bench.store.anchors import Calibration, still_open
from skycity_bench.store.review_store import ReviewStore


def visible_sheets(store: ReviewStore, me: Principal, *, unblind: bool = False) -> list[CandidateSheet]:
    """Every candidate's sheet as `me` may see it (unblind: labels shown, for an admin only)."""
    if me.is_admin:
        return Calibration(store).mark(store.sheets(unblind=unblind))
    return store.own_sheets(me.name, set(still_open(store, me.id)))


def sheet_response(fmt: str, sheets: list[CandidateSheet]) -> Response:
    """The sheets as a file: "md" (ranked Markdown), "csv", or else JSON (ranked)."""
    if fmt == "md":
        return PlainTextResponse(to_markdown(sheets, rank(sheets)), media_type="text/markdown; charset=utf-8")
    if fmt == "csv":
        return PlainTextResponse(to_csv(sheets), media_type="text/csv; charset=utf-8")
    return Response(to_json(sheets, rank(sheets)), media_type="application/json")


__all__ = ["visible_sheets", "sheet_response"]
