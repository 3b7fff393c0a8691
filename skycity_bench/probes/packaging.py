"""Packaging (item packaging.single_file): a static audit of the HTML file plus one short
load of the page, so the run's network log (the pseudo-probe "network", written by the
runner from every page of every probe) holds what the page really asks for.

The static audit (probes/_html_audit.py) lists every literal URL in a position that loads
something (markup, CSS, import maps, imports, fetch/XHR/WebSocket/Worker..., loader calls),
calls with non-literal URLs, and binary assets embedded as base64. The scorer
(scorers/packaging.py) decides, with the rules written there.

The page runs on the fake clock for `network_watch_s` demo seconds: timers and animation
frames fire (a texture loaded from a setTimeout is requested too) without waiting in real
time; what is measured here is which requests happen, not when.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.analysis.html_audit import audit
from skycity_bench.evidence.packaging import PackagingEvidence
from skycity_bench.inputs.scenario import Viewport
from skycity_bench.probes import probe


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    network_watch_s: float = Field(ge=0, le=60, description="demo seconds the page runs to record its requests")
    # A small viewport: which requests a page makes does not depend on its size, and a heavy
    # demo renders its frames much faster at 640x360.
    width: int = Field(ge=320)
    height: int = Field(ge=240)


@probe(
    "packaging",
    order=20,
    settings=Settings,
    evidence=PackagingEvidence,
    description="static audit of the HTML (external references, embedded base64 assets) + one short load",
    budget=lambda sc: 30 + sc.timeouts.load_s + sc.timeouts.probe_grace_s,
)
async def collect(ctx) -> PackagingEvidence:
    text = ctx.demo.text
    found = audit(text)
    page: dict = {"watched_s": ctx.settings.network_watch_s}
    dp = await ctx.open_page(fake_clock=True, viewport=Viewport(width=ctx.settings.width, height=ctx.settings.height))
    try:
        if ctx.settings.network_watch_s > 0:
            await dp.run_for(ctx.settings.network_watch_s * 1000)
        page["bench_errors"] = (await dp.evaluate("__SKYCITY__.bench.errors", what="reading page errors") or [])[:20]
        page["page_errors"] = dp.events.page_errors[:20]
        page["navigations"] = dp.events.navigations[:20]
    finally:
        await dp.close()
    return PackagingEvidence.model_validate(
        {"file_bytes": len(ctx.demo.html), "lines": text.count("\n") + 1, **found, "page": page}
    )
