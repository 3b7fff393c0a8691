"""The closed network: every request a demo makes, other than its own document (data: and
blob: never reach the router), is recorded and answered by the bench.

By default the answer is a network error, so a demo can neither reach the network nor
read local files nor talk to other loopback ports. `resolvers` may answer a request
instead (the offline library cache does); whatever answers is recorded with the
request, so `packaging.single_file` still sees every external dependency.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Optional, Protocol


@dataclass
class RequestRecord:
    url: str
    method: str
    resource_type: str
    t_wall: float
    outcome: str = "blocked"  # "blocked" | "served" (by a resolver) | "allowed" (--network allow)
    detail: str = ""  # who served it / why it was blocked

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Resolved:
    body: bytes
    content_type: str
    note: str  # e.g. "served from the offline cache: three@0.160.0"
    status: int = 200


class Resolver(Protocol):
    def __call__(self, url: str) -> Optional[Resolved] | Awaitable[Optional[Resolved]]: ...


@dataclass
class NetworkPolicy:
    """Attach to a browser context; collects `requests` across every page of it."""

    doc_url: str
    mode: str = "offline"  # "offline" | "allow"
    resolvers: list[Callable] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    # Misses a resolver reports (e.g. "three@0.999.0 not in the cache: skycity-bench cache add ...").
    misses: list[str] = field(default_factory=list)

    async def attach(self, context, *, websockets: bool = True) -> None:
        """Route every request of the context. WebSockets too unless `websockets` is False:
        Playwright's WebSocket routing leaves four globals on every page's window, so the
        bench's pages block them through their own CDP session instead (world.py),
        recording each one with `note_websocket`."""
        await context.route("**/*", self._handle)
        if websockets and hasattr(context, "route_web_socket"):
            await context.route_web_socket("**/*", self._handle_ws)

    async def _handle(self, route) -> None:
        req = route.request
        url = req.url
        if url.split("#")[0] == self.doc_url or url.split("#")[0].split("?")[0] == self.doc_url:
            if req.is_navigation_request() or req.resource_type == "document":
                await route.continue_()
                return
        rec = RequestRecord(url=url, method=req.method, resource_type=req.resource_type, t_wall=time.time())
        self.requests.append(rec)
        for resolve in self.resolvers:
            try:
                got = resolve(url)
                if hasattr(got, "__await__"):
                    got = await got
            except Exception as e:  # a broken resolver must not break the run
                rec.detail = f"resolver error: {e}"
                continue
            if isinstance(got, Resolved):
                rec.outcome, rec.detail = "served", got.note
                await route.fulfill(
                    status=got.status,
                    body=got.body,
                    content_type=got.content_type,
                    headers={"Access-Control-Allow-Origin": "*"},
                )
                return
            if isinstance(got, str):  # a resolver explains a miss
                rec.detail = got
                self.misses.append(got)
        if self.mode == "allow" and url.startswith(("http://", "https://")) and not _is_loopback(url):
            rec.outcome, rec.detail = "allowed", rec.detail or "--network allow"
            await route.continue_()
            return
        rec.detail = rec.detail or "blocked: the bench's network is closed"
        await route.abort("blockedbyclient")

    async def _handle_ws(self, ws) -> None:
        self.note_websocket(ws.url)
        await ws.close()

    def note_websocket(self, url: str) -> None:
        self.requests.append(
            RequestRecord(
                url=url,
                method="GET",
                resource_type="websocket",
                t_wall=time.time(),
                detail="blocked: the bench's network is closed",
            )
        )


def _is_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
