"""What every part of the review app shares: the store, the app's Auth, the page templates
and the signed page-opening stamp. create_app makes one ReviewContext and hands it to each
route module's `build`, so a route module needs nothing from the app but this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from skycity_bench.inputs.rubric import Rubric
from skycity_bench.review.auth import Auth
from skycity_bench.review.timing import OpenedStamp
from skycity_bench.store.review_store import ReviewStore


@dataclass(frozen=True)
class ReviewContext:
    store: ReviewStore
    auth: Auth
    templates: Jinja2Templates
    stamp: OpenedStamp  # a candidate page's opening time, signed (time per candidate)

    @property
    def rubric(self) -> Rubric:
        return self.store.rubric

    def page(self, request: Request, template: str, values: dict[str, Any], status: int = 200) -> Response:
        """A page from its template, with the rubric that every page's header shows."""
        return self.templates.TemplateResponse(request, template, {"rubric": self.rubric, **values}, status_code=status)


__all__ = ["ReviewContext"]
