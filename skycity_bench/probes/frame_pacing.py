"""Frame pacing (item smoothness.frame_pacing): real-time playback with the independent
rAF sampler (browser/js/frame_sampler.js) injected before any page script.

This probe uses REAL time on purpose: frame pacing is exactly what the fake clock would
hide. It runs first, in its own fresh context, so nothing else the bench does disturbs it.
It collects per-frame data only; the scorer computes the statistics and the tier.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel, ConfigDict, Field

from ..browser.session import js
from ..errors import ProbeError
from . import probe


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_scene_update_ratio: float = Field(0.9, ge=0, le=1)
    max_freeze_s: float = Field(0.5, gt=0)
    clock_disagreement_ms: float = Field(3.0, ge=0)
    clock_disagreement_ratio: float = Field(0.005, ge=0)
    clock_resolution_ms: float = Field(0.1, ge=0, le=5)


_READ_CHUNK = 8192


@probe("frame_pacing", order=10, settings=Settings, version="1",
       description="real-time playback; rAF timestamps, performance.now() on entry, scene draw signal",
       budget=lambda sc: sc.duration_s + sc.timeouts.load_s + sc.timeouts.probe_grace_s)
async def collect(ctx) -> dict:
    duration = ctx.scenario.duration_s
    dp = await ctx.open_page(init_scripts=[js("frame_sampler.js")])
    try:
        t_start = time.monotonic()
        task = ctx.progress.task("frame pacing: real-time playback", duration)
        try:
            while (el := time.monotonic() - t_start) < duration + 0.1:
                task.update(min(el, duration), note=f"{max(0.0, duration - el):4.0f} s left")
                await asyncio.sleep(min(0.25, max(0.01, duration + 0.1 - el)))
                if dp.events.crashed or dp.events.closed:
                    break
        finally:
            task.close()
        meta = await dp.evaluate(
            "[window.__skycityFrames ? window.__skycityFrames.count() : -1, window.__skycityBench.t0,"
            " window.__skycityBench.t0Raf, window.__skycityBench.errors]", what="reading the frame sampler")
        n, t0, t0_raf, errors = meta
        if n < 0:
            raise ProbeError("the frame sampler is missing from the page (was it removed by the demo?)")
        ts, now, drew = [], [], []
        for start in range(0, n, _READ_CHUNK):
            part = await dp.evaluate("([a, b]) => window.__skycityFrames.read(a, b)", [start, start + _READ_CHUNK],
                                     timeout=10, what="reading the frame sampler")
            ts += part["ts"]; now += part["now"]; drew += part["drew"]
    finally:
        await dp.close()
    # Keep frames from t = 0 (first frame after load) to the end of the played duration.
    keep = [i for i, t in enumerate(ts) if t >= t0_raf and t - t0_raf <= duration * 1000 + 20]
    return {
        "duration_s": duration,
        "frames": len(keep),
        "raf_ms": [round(ts[i] - t0_raf, 3) for i in keep],
        "entry_ms": [round(now[i] - t0, 3) for i in keep],
        "drew": [int(drew[i]) for i in keep],
        "page_errors": (errors or [])[:20],
        "dialogs": dp.events.dialogs[:20],
    }
