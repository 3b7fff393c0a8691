"""Chromium's own frame reporting during the pacing pass.

What tells, in this Chromium (Debian 156, new headless, software compositing), whether a
frame reached the screen on time, tried for real:

- a CDP trace with `disabled-by-default-devtools.timeline.frame`: the compositor's
  `PipelineReporter` events (the frame reporting Chromium's own smoothness metrics and
  DevTools' frames track are built on). One per vsync of the demo's renderer, with the
  frame's begin time (the very value rAF passes its callbacks) and its fate:
  STATE_PRESENTED_ALL / STATE_PRESENTED_PARTIAL (a frame reached the screen at that vsync),
  STATE_DROPPED (the frame the page was producing was not presented at its vsync), or
  STATE_NO_UPDATE_DESIRED (nothing to draw). Works headless here: a steady canvas page gives
  0 dropped of 241, a 42 ms stall every 8th frame 28 dropped of 240, each at the start of
  the rAF interval the stall lengthened. This is what the bench uses.
- `Browser.getHistograms`: only the browser process's histograms (about 1300 here, none
  named Graphics.Smoothness.* even after the page navigated away or closed): the renderer's
  and viz's histograms are never synchronised to it, so PercentDroppedFrames is unavailable.
- Long Animation Frames: work headless, but see only frames whose work passed 50 ms (the
  42 ms stall shows as 57–64 ms LoAF entries; a 25 ms stall would not show) and need an
  observer in the page: no better than the sampler's own clocks, so not used.

Cost: the category is small (about 2 000 events/s on the bench's machine, all from the
compositor and viz threads, none on the demo's main thread); events are filtered as they
arrive, so memory stays bounded over a 60 s pass.

The trace's clock is TimeTicks (µs). The page's performance.now() counts from its
navigation start, which `blink.user_timing`'s `navigationStart` mark for the demo's
document gives on the same clock, and the same event names the renderer process that runs
the demo (the browser's own UI compositor reports frames too). Frame begin times therefore
land on the page's clock exactly; the probe checks that by how many rAF timestamps find
their frame (`alignment`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)

CATEGORIES = "disabled-by-default-devtools.timeline.frame,blink.user_timing"

# Frame fates, as kept in the probe's evidence (short: one per vsync).
PRESENTED, DROPPED = "P", "D"
_STATE = {"STATE_PRESENTED_ALL": PRESENTED, "STATE_PRESENTED_PARTIAL": PRESENTED, "STATE_DROPPED": DROPPED}


class FrameTrace:
    """Start before the demo's navigation, stop after the pass; `frames(url)` then gives the
    demo renderer's frames on the page's clock."""

    def __init__(self, context, page):
        self._context = context
        self._page = page
        self._cdp: Any = None  # playwright's CDPSession, once tracing started
        self._done = asyncio.Event()
        self._nav: list[tuple[int, int, str]] = []  # (pid, ts µs, documentLoaderURL)
        self._reports: dict[int, dict[int, list]] = {}  # pid -> frame_sequence -> [ts, fate, comp, main]
        self.error: str | None = None
        self._stopped = False

    async def start(self) -> bool:
        try:
            self._cdp = await self._context.new_cdp_session(self._page)
            self._cdp.on("Tracing.dataCollected", self._collect)
            self._cdp.on("Tracing.tracingComplete", lambda *_: self._done.set())
            await self._cdp.send("Tracing.start", {"categories": CATEGORIES, "transferMode": "ReportEvents"})
            return True
        except Exception as e:  # a trace is evidence beside the rubric's measure, never a reason to fail
            self.error = f"tracing could not start: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            return False

    def _collect(self, params: dict) -> None:
        for e in params.get("value", ()):
            name = e.get("name")
            if name == "PipelineReporter" and e.get("ph") == "b":
                r = (e.get("args") or {}).get("frame_reporter") or {}
                fate = _STATE.get(str(r.get("state")))  # a missing state: no fate
                seq = r.get("frame_sequence")
                if fate is None or seq is None:
                    continue
                per = self._reports.setdefault(e["pid"], {})
                old = per.get(seq)
                # One vsync can have two reporters (main-thread and compositor-only
                # updates); dropped wins: that vsync did not show what the page produced.
                if old is None or fate == DROPPED:
                    per[seq] = [
                        e["ts"],
                        fate,
                        bool(r.get("has_compositor_animation")),
                        bool(r.get("has_main_animation")),
                    ]
            elif name == "navigationStart":
                data = (e.get("args") or {}).get("data") or {}
                if data.get("isLoadingMainFrame"):
                    self._nav.append((e["pid"], e["ts"], data.get("documentLoaderURL") or ""))

    async def stop(self, timeout: float = 10.0) -> None:
        """End the trace and wait for its data, `timeout` seconds at most in all: a renderer
        whose main thread hangs may never flush its part, and must not hang the bench."""
        if self._cdp is None or self._stopped:
            return
        self._stopped = True

        async def end() -> None:
            await self._cdp.send("Tracing.end")
            await self._done.wait()

        try:
            await asyncio.wait_for(end(), timeout)
        except TimeoutError:
            self.error = self.error or f"the trace did not complete within {timeout:g} s"
        except Exception as e:
            self.error = (
                self.error or f"the trace did not complete: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            )
        try:
            await asyncio.wait_for(self._cdp.detach(), 2)
        except Exception:
            pass

    def frames(self, url: str) -> dict:
        """{"pid", "t_ms" (frame begin on the page's performance.now() clock), "fate" (one
        letter a frame), "compositor_animation", "main_animation" ("0"/"1" a frame)} for the demo's renderer, or {"error"}."""
        if self.error:
            return {"error": self.error}
        navs = [n for n in self._nav if n[2] == url]
        if not navs:
            return {"error": "the trace holds no navigationStart for the demo's document (no clock anchor)"}
        pid, t0_us, _ = navs[-1]
        rows = sorted((self._reports.get(pid) or {}).values())
        if not rows:
            return {"error": "the trace holds no frame reports for the demo's renderer"}
        return {
            "pid": pid,
            "t_ms": [round((r[0] - t0_us) / 1000.0, 3) for r in rows],
            "fate": "".join(r[1] for r in rows),
            "compositor_animation": "".join("1" if r[2] else "0" for r in rows),
            "main_animation": "".join("1" if r[3] else "0" for r in rows),
        }
