"""The sheet page at the size of a real round (50 candidates x 20 items is over a thousand
rows): a page of PER_PAGE candidates, a box that jumps to a candidate's page, and filters
that keep only the candidates someone has to act on.

Filters (query parameters, combinable):
- `third=1`: an item waits for a third reviewer (two reviewers more than one level apart);
- `disagree=1`: reviewers disagree on an item by more than one level (25 % of its value),
  waiting or already settled by a third reviewer's median;
- `open=1`: not finished (no total yet and not final).
`jump=ID` shows the page holding that candidate (a part of an id is enough when it names one
candidate) and marks it; `page=N` pages through. The page's links keep the filters.

The filters read the sheets the account may see (review/sheet_access.py): a reviewer's
sheets before finalisation hold their own work only, so a filter never tells them about
anyone else's scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlencode

from skycity_bench.judging.sheet_totals import CandidateSheet

PER_PAGE = 10
FILTERS = {
    "third": "waits for a third reviewer",
    "disagree": "reviewers disagree by more than one level",
    "open": "not finished",
}
EPS = 1e-9


def needs_third(s: CandidateSheet) -> bool:
    return any("needs third reviewer" in i.flags for r in s.rows for i in r.items)


def disagrees(s: CandidateSheet) -> bool:
    """Two reviewers' points on one item more than a level (a quarter of its value) apart."""
    for r in s.rows:
        for i in r.items:
            pts = [float(x["points"]) for x in i.raw if x.get("points") is not None]
            if len(pts) >= 2 and max(pts) - min(pts) > 0.25 * float(i.max) + EPS:
                return True
    return False


def is_open(s: CandidateSheet) -> bool:
    return s.total is None and not s.finalized


TESTS = {"third": needs_third, "disagree": disagrees, "open": is_open}


@dataclass
class SheetPage:
    sheets: list[CandidateSheet]  # this page's
    page: int
    pages: int
    matching: int  # candidates that pass the filters
    total: int  # candidates in all
    filters: dict[str, bool]
    jump: str = ""
    found: Optional[str] = None  # the candidate jumped to
    jump_error: str = ""
    links: dict[str, Any] = field(default_factory=dict)


def _url(filters: dict[str, bool], **extra: Any) -> str:
    q = {k: "1" for k, on in filters.items() if on} | {k: v for k, v in extra.items() if v not in (None, "")}
    return "/sheet" + ("?" + urlencode(q) if q else "")


def _page_number(raw: Optional[str]) -> int:
    try:
        return max(1, int(str(raw)))
    except (TypeError, ValueError):
        return 1


def sheet_page(sheets: list[CandidateSheet], query: dict[str, str], per_page: int = PER_PAGE) -> SheetPage:
    """The page of `sheets` the query asks for (filters, jump, page); see the module doc."""
    filters = {k: query.get(k) in ("1", "on", "true") for k in FILTERS}
    kept = [s for s in sheets if all(TESTS[k](s) for k, on in filters.items() if on)]
    pages = max(1, math.ceil(len(kept) / per_page))
    page, jump = _page_number(query.get("page")), str(query.get("jump") or "").strip()[:40]
    found, error = None, ""
    if jump:
        hits = [i for i, s in enumerate(kept) if jump.lower() in s.candidate_id.lower()]
        if len(hits) == 1:
            found, page = kept[hits[0]].candidate_id, hits[0] // per_page + 1
        else:
            error = f"{'no' if not hits else len(hits)} candidate(s) match {jump!r}" + (
                " among the filtered ones" if any(filters.values()) else ""
            )
    page = min(page, pages)
    out = SheetPage(
        kept[(page - 1) * per_page : page * per_page], page, pages, len(kept), len(sheets), filters, jump, found, error
    )
    out.links = {
        "prev": _url(filters, page=page - 1) if page > 1 else None,
        "next": _url(filters, page=page + 1) if page < pages else None,
        "pages": [(n, _url(filters, page=n)) for n in range(1, pages + 1)],
        "toggle": {k: _url({**filters, k: not on}) for k, on in filters.items()},
    }
    return out


__all__ = ["sheet_page", "SheetPage", "PER_PAGE", "FILTERS"]
