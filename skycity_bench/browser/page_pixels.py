"""DemoPage's pixels (browser/session.py): the viewport as PNG bytes or a BGR array, straight
from CDP where that shows what Playwright's screenshot would (about half the cost), and how
long a slow page may take to answer (slow_limit_s, also read by DemoPage.call). A mixin:
DemoPage holds the page, its bench world, its clock log and its handle."""

from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from skycity_bench.common.errors import DemoCrash, DemoHang, ProbeError
from skycity_bench.inputs.scenario import Scenario, Viewport

if TYPE_CHECKING:
    from skycity_bench.browser.clock_budget import RunBudget
    from skycity_bench.browser.world import BenchWorld


class PixelsMixin:
    if TYPE_CHECKING:  # what DemoPage (browser/session.py) holds and does, used here
        scenario: Scenario
        fake_clock: bool
        slowest_answer_s: float
        viewport: Viewport
        world: BenchWorld | None
        page: Any  # playwright's Page

        @property
        def budget(self) -> RunBudget: ...

        async def call(self, coro: Any, timeout: float, what: str) -> Any: ...

        async def evaluate_isolated(
            self, fn: str, arg: Any = None, timeout: float = 5.0, what: str = "page script"
        ) -> Any: ...

    def slow_limit_s(self, timeout: float) -> float:
        """`timeout`, or hang_frames of the page's measured frame cost if longer: a page that
        renders slowly answers slowly (a screenshot waits for the GPU work it queued), and is
        hung only when it has not answered in that many of its own frames."""
        t = self.scenario.timeouts
        clock = getattr(self, "clock", None)
        cost = clock.frame_cost_ms if clock is not None else None
        if clock is not None and cost is not None:
            cost = max(cost, clock.seen_cost_ms or 0.0)
        if cost is None:
            # not measured on this page (real time, or still loading): what this run measured
            # of the same demo on its other pages
            cost = self.budget.worst_cost_ms()
        if cost is None and self.fake_clock:
            # Nothing measured of this demo yet: a fake-clock page between its load and its
            # measured frames is still loading (shader compiles, first uploads; software WebGL
            # blocks the main thread on them): the load timeout applies to its calls, as to its
            # clock advances (clock_budget.watched). CI: the shadow-map room (~2.3 s a frame)
            # took over 5 s to answer its first clock read beside three other browsers, and
            # every item of it came out `untested`.
            return max(timeout, t.load_s)
        if cost is None:
            # A real-time page answers a call between two of its frames: the slowest answer it
            # gave (its first, "reading t0", is timed with the load timeout) is at least one
            # frame's cost (scenarios/skycity.yaml: answer_margin). An infinite loop answers
            # nothing after it starts, so it is still caught at `timeout` when its earlier
            # answers were quick.
            return max(timeout, t.answer_margin * self.slowest_answer_s)
        return max(timeout, t.hang_frames * (cost or 0.0) / 1000.0)

    async def screenshot_png(self, timeout: float = 20.0, **kw) -> bytes:
        """PNG of the viewport, or of `clip` (viewport CSS px, as Playwright's)."""
        at = await self._plain_capture_at(timeout) if set(kw) <= {"clip"} else None
        params: dict[str, Any] = {"format": "png", "optimizeForSpeed": True}
        if at is not None and kw.get("clip") is not None:
            box = _trimmed(kw["clip"], self.viewport)
            # as Playwright: the box trimmed to the viewport, in document coordinates
            params["clip"] = None if box is None else {**box, "x": at[0] + box["x"], "y": at[1] + box["y"], "scale": 1}
        if at is not None and self.world is not None and params.get("clip", True) is not None:
            # Straight from CDP with Chromium's fast PNG settings: the same lossless pixels as
            # Playwright's screenshot (tests/probes/test_plain_capture.py) at about half the
            # cost (PNG encoding is most of a frame's cost; Playwright also prepares and
            # restores every frame of the page around each shot).
            r = await self.call(self.world.cdp.send("Page.captureScreenshot", params), timeout, "screenshot")
            return base64.b64decode(r["data"])
        # Playwright's own limit (30 s by default) must not end a screenshot the bench still
        # waits for: a slow page's limit is longer (slow_limit_s; the shadow-map example at
        # 1920x1080 took over 30 s for one real-time frame under load).
        limit = self.slow_limit_s(timeout)
        return await self.call(
            self.page.screenshot(type="png", scale="css", caret="hide", timeout=(limit + 5) * 1000, **kw),
            timeout,
            "screenshot",
        )

    async def _plain_capture_at(self, timeout: float) -> tuple[float, float] | None:
        """Where the viewport is in the document (its scroll) when a plain capture shows what
        Playwright's screenshot would, else None. Playwright hides the caret of editable
        elements and waits for the page's fonts; so the plain capture is taken only when
        nothing that could hold a caret has the focus (the body, the document or a canvas; an
        iframe or a shadow host could hide one) and the page is not zoomed, after the fonts
        (read in the bench's isolated world)."""
        if not getattr(self, "plain_capture", False) or self.world is None:
            return None
        try:
            at = await self.evaluate_isolated(_PLAIN_CAPTURE_AT, timeout=timeout, what="screenshot (the focus)")
        except (DemoHang, DemoCrash):
            raise
        except ProbeError:
            return None  # Playwright's screenshot then says what is wrong
        return (float(at[0]), float(at[1])) if isinstance(at, list) and len(at) == 2 else None

    async def frame(self, timeout: float = 20.0) -> np.ndarray:
        """The viewport as a BGR uint8 array in CSS pixels (hook coordinates index it directly)."""
        png = await self.screenshot_png(timeout)
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise ProbeError("screenshot could not be decoded")
        return img


# DemoPage._plain_capture_at, in the bench's isolated world (its own timers: the page's are
# the fake clock's). Fonts: as Playwright, up to 2 s.
_PLAIN_CAPTURE_AT = """async () => {
  await Promise.race([document.fonts.ready, new Promise(r => setTimeout(r, 2000))]);
  const a = document.activeElement, v = window.visualViewport;
  const plain = document.designMode !== 'on' && (!a || !a.isContentEditable && (a === document.body
                || a === document.documentElement || a.tagName === 'CANVAS'));
  return plain && v && v.scale === 1 ? [v.pageLeft, v.pageTop] : null;
}"""


def _trimmed(clip: dict, vp: Viewport) -> dict | None:
    """A viewport clip trimmed to the viewport, whole CSS px in size (Playwright's
    trimClipToSize and enclosingIntSize); None when nothing is left (Playwright then says so)."""
    x0, y0 = max(0.0, min(clip["x"], vp.width)), max(0.0, min(clip["y"], vp.height))
    x1 = max(0.0, min(clip["x"] + clip["width"], vp.width))
    y1 = max(0.0, min(clip["y"] + clip["height"], vp.height))
    w, h = math.floor(x1 - x0 + 1e-3), math.floor(y1 - y0 + 1e-3)
    return {"x": x0, "y": y0, "width": w, "height": h} if w > 0 and h > 0 else None
