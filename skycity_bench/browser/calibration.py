"""60 Hz calibration: rAF intervals on a blank page for about two seconds, before each timed
run. The measured refresh interval goes into `environment`; a value more than the
scenario's tolerance away from 16.67 ms is reported (timing figures are then not
comparable with a standard run)."""

from __future__ import annotations

import asyncio

import numpy as np

from ..scenario import Scenario

_BLANK = "<!doctype html><html><body style='margin:0;background:#000'></body></html>"

_MEASURE = """(ms) => new Promise((done) => {
  const t = [];
  const start = performance.now();
  function f(ts) { t.push(ts); if (ts - start < ms) requestAnimationFrame(f); else done(t); }
  requestAnimationFrame(f);
})"""


async def calibrate(handle, scenario: Scenario) -> dict:
    cal = scenario.calibration
    ctx = await handle.browser.new_context(viewport={"width": 320, "height": 240})
    try:
        page = await ctx.new_page()
        await page.set_content(_BLANK)
        stamps = await asyncio.wait_for(page.evaluate(_MEASURE, cal.duration_s * 1000), cal.duration_s + 10)
    finally:
        await ctx.close()
    iv = np.diff(np.asarray(stamps, float))
    median = float(np.median(iv)) if len(iv) else float("nan")
    off = abs(median - cal.expected_interval_ms)
    return {
        "refresh_interval_ms": round(median, 3),
        "refresh_hz": round(1000.0 / median, 2) if median > 0 else None,
        "frames": int(len(iv)),
        "p95_ms": round(float(np.percentile(iv, 95)), 3) if len(iv) else None,
        "expected_interval_ms": cal.expected_interval_ms,
        "within_tolerance": bool(off <= cal.tolerance_ms),
        "tolerance_ms": cal.tolerance_ms,
    }
