"""The API's documentation: /docs, rendered here from the app's OpenAPI document (FastAPI's
own /docs pulls Swagger UI from a CDN, and this machine may be offline), and the document
itself at /openapi.json. Both for signed-in accounts, like every route but the sign-in pages."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse

from skycity_bench.review.auth import Principal
from skycity_bench.review.context import ReviewContext


def build(ctx: ReviewContext) -> APIRouter:
    router = APIRouter()

    @router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request, me: Principal = Depends(ctx.auth.reviewer)):
        spec = request.app.openapi()
        ops = [
            {"method": m.upper(), "path": path, **op} for path, item in spec["paths"].items() for m, op in item.items()
        ]
        values = {
            "reviewer": me.name,
            "ops": ops,
            "schemas": spec.get("components", {}).get("schemas", {}),
            "json": json,
        }
        return ctx.page(request, "api_docs.html", values)

    @router.get("/openapi.json", include_in_schema=False, dependencies=[Depends(ctx.auth.reviewer)])
    def openapi_json(request: Request):
        return JSONResponse(request.app.openapi())

    return router


__all__ = ["build"]
