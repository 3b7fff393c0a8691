"""The machine's rendering headroom: can it draw a standard scene at a viewport at 60 Hz?

A demo's frame pacing is only the demo's when the machine could have rendered its viewport
in time. Before a pacing pass the bench plays a standard scene (MotionMark's idea: measure
the machine first) at the scenario's viewport: a full-viewport Canvas2D city redrawn every
frame, a sky gradient, a few hundred buildings and moving lights, about what a light
generated demo draws. When that scene cannot hold 60 Hz, a tier the demo loses may be the
machine's, and the report says so. `doctor` plays it at several viewports and names the
largest that keeps 60 Hz here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from skycity_bench.inputs.scenario import Scenario, Viewport

STANDARD_SCENE = """<!doctype html><html><body style="margin:0;overflow:hidden;background:#000">
<canvas id="c"></canvas><script>
const c = document.getElementById('c'), g = c.getContext('2d');
c.width = innerWidth; c.height = innerHeight;
const W = c.width, H = c.height, towers = [];
for (let i = 0; i < 300; i++) towers.push([(i * 97) % W, H * (0.35 + ((i * 53) % 60) / 100), 8 + (i % 7) * 4]);
function frame(t) {
  const sky = g.createLinearGradient(0, 0, 0, H);
  sky.addColorStop(0, '#0b1a3e'); sky.addColorStop(1, '#e8a25c');
  g.fillStyle = sky; g.fillRect(0, 0, W, H);
  for (const [x, y, w] of towers) { g.fillStyle = '#1d2b44'; g.fillRect(x, y, w, H - y); }
  for (let i = 0; i < 120; i++) {
    const x = (i * 131 + t * (0.05 + (i % 5) * 0.02)) % W, y = H * 0.3 + (i * 37) % (H * 0.6);
    g.fillStyle = i % 2 ? '#ffd166' : '#7ad7ff';
    g.beginPath(); g.arc(x, y, 3 + (i % 4), 0, 6.283); g.fill();
  }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body></html>"""

_MEASURE = """(ms) => new Promise((done) => {
  const t = [];
  function f(ts) { t.push(ts); if (ts - t[0] < ms) requestAnimationFrame(f); else done(t); }
  requestAnimationFrame(() => requestAnimationFrame(f));
})"""


async def headroom(handle, scenario: Scenario, viewport: Viewport | None = None) -> dict[str, Any]:
    """The standard scene played at `viewport` (default the scenario's) for the scenario's
    calibration.headroom_s: its rAF P95, late share and whether it holds 60 Hz by the
    scenario's headroom rule."""
    cal, vp = scenario.calibration, viewport or scenario.viewport
    ctx = await handle.browser.new_context(
        viewport={"width": vp.width, "height": vp.height}, device_scale_factor=vp.device_scale_factor
    )
    try:
        page = await ctx.new_page()
        await page.set_content(STANDARD_SCENE)
        stamps = await asyncio.wait_for(page.evaluate(_MEASURE, cal.headroom_s * 1000), cal.headroom_s + 15)
    finally:
        await ctx.close()
    iv = np.diff(np.asarray(stamps, float))
    p95 = float(np.percentile(iv, 95)) if iv.size else None
    late = float(np.mean(iv > 1.5 * cal.expected_interval_ms)) if iv.size else None
    holds = p95 is not None and late is not None and p95 <= cal.headroom_p95_ms and late <= cal.headroom_late_share
    return {
        "viewport": f"{vp.width}x{vp.height}",
        "frames": int(iv.size),
        "p95_ms": None if p95 is None else round(p95, 2),
        "late_share": None if late is None else round(late, 4),
        "holds_60hz": bool(holds),
        "rule": f"P95 ≤ {cal.headroom_p95_ms:g} ms and ≤ {cal.headroom_late_share:.0%} of intervals over 1.5 frames",
    }


async def largest_viewport(handle, scenario: Scenario) -> tuple[list[dict[str, Any]], str | None]:
    """The standard scene at each of the scenario's headroom viewports (small to large, 16:9):
    every result, and the largest viewport that held 60 Hz (None: not even the smallest)."""
    out, best = [], None
    for w, h in scenario.calibration.headroom_viewports:
        r = await headroom(handle, scenario, Viewport(width=w, height=h))
        out.append(r)
        if r["holds_60hz"]:
            best = r["viewport"]
    return out, best
