"""Frame stepping under the fake clock, shared by the timeline and recording probes.

The demo's time only moves when the bench moves it (DemoPage.run_for), so a frame is taken
at exactly the bench time asked for, however slowly the machine renders: a 30 fps recording
is smooth on any machine, and a frame-to-frame comparison compares the demo with itself,
never with the test machine's hiccups.

Screenshots go through CDP's Page.captureScreenshot directly: JPEG with optimizeForSpeed for
video frames (the compositor copy dominates the cost; JPEG encoding in Chromium is the
cheapest part of it), PNG where pixels are analysed. `clip.scale` lets Chromium scale the
capture down before encoding, which saves the transfer and the decoding on this side.

Animation frames on a 60 Hz grid: Playwright's fake clock fires requestAnimationFrame every
16 ms (62.5 Hz), so a 30 fps capture would see 2 and now and then 3 animation frames per
video frame (a visible stutter in every pan) and sample intervals would wobble by 16 ms.
RAF_60HZ_JS (an init script, after the clock is installed and before any page script)
batches rAF callbacks onto the fake clock's timers at exact multiples of 1/60 s, as a 60 Hz
display does; t = 0 (the first frame after load) then lies on that grid, and every frame
time asked for here is a grid point: frame i at 30 fps shows exactly the animation frame of
t_i = i / 30 s. A callback that throws is reported (window error event) and the others
still run, as with the browser's own rAF, instead of aborting the clock's runFor.

Time moves in whole milliseconds (Playwright's clock.runFor takes integers): each step goes
to the first whole millisecond after t_i, at most 1 ms past the grid point, so the
frame shown is always t_i's and rounding never accumulates over 1950 frames.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import cv2
import numpy as np

from skycity_bench.common.errors import ProbeError

RAF_HZ = 60

RAF_60HZ_JS = (
    r"""
(() => {
  // Hidden from the page: no global of its own (the flag is on the bench's
  // namespace, cloak.js), and the two replacements look native: methods (no prototype),
  // native name, length and toString, and the native's TypeError for a missing callback.
  const NS = __SKYCITY__;
  if (NS.raf60) return;
  NS.raf60 = true;
  const P = 1000 / %d;
  const setT = window.setTimeout, perf = window.performance;
  let queue = null, nextId = 1;
  const api = { requestAnimationFrame(cb) {
    if (typeof cb !== 'function') {
      const e = new TypeError("Failed to execute 'requestAnimationFrame' on 'Window': " + (arguments.length
        ? "parameter 1 is not of type 'Function'." : "1 argument required, but only 0 present."));
      NS.clean(e, api.requestAnimationFrame);
      throw e;
    }
    const id = nextId++;
    if (!queue) {
      const q = queue = new Map();
      const now = perf.now();
      const at = (Math.floor(now / P + 1e-6) + 1) * P;
      setT.call(window, () => {
        queue = null;
        const ts = perf.now();
        for (const f of q.values()) {
          try { f(ts); } catch (e) { try { reportError(e); } catch (_) {} }
        }
      }, at - now);
    }
    queue.set(id, cb);
    return id;
  }, cancelAnimationFrame(id) { if (queue) queue.delete(id); } };
  NS.replace(window, 'requestAnimationFrame', api.requestAnimationFrame);
  NS.replace(window, 'cancelAnimationFrame', api.cancelAnimationFrame);
})();
"""
    % RAF_HZ
)


def on_grid(t_s: float) -> float:
    """The 60 Hz animation frame time nearest to t_s."""
    return round(t_s * RAF_HZ) / RAF_HZ


def frame_time(t_s: float) -> float:
    """Time of the animation frame on screen at clock time t_s (the last 60 Hz grid point
    reached). A step to a grid time lands up to 1 ms past it (Stepper.to: whole ms from
    where the page's clock started), so two pages' clocks read 2.000 and 2.001 s at the same
    frame; this is the same for both."""
    return math.floor(t_s * RAF_HZ + 1e-6) / RAF_HZ


class Stepper:
    def __init__(self, dp, capture_timeout_s: float = 20.0):
        self.dp = dp
        self.cdp: Any = None  # playwright's CDPSession on the page (start())
        self.pos_ms: float = 0.0  # bench time of the page now, ms since t = 0
        self.capture_timeout_s = capture_timeout_s

    async def start(self) -> Stepper:
        self.cdp = await self.dp.call(self.dp.context.new_cdp_session(self.dp.page), 10, "opening a CDP session")
        self.pos_ms = (await self.dp.now_s()) * 1000.0
        return self

    @property
    def now_s(self) -> float:
        return self.pos_ms / 1000.0

    @property
    def frame_s(self) -> float:
        """Time of the animation frame on screen now (the last 60 Hz grid point reached)."""
        return frame_time(self.pos_ms / 1000.0)

    async def to(self, t_s: float, picture_only: bool = False) -> None:
        """Advance to the first whole ms at or after bench time t_s (never backwards).
        Every advance's time limit comes from the page's measured frame cost (slow is not
        hung: browser/clock_budget.py); with `picture_only` a slow page may get there in
        coarse clock steps (one frame rendered per step, DemoPage.run_for)."""
        # +1 µs: a grid point such as 50 ms is an integer, and the float sum behind the
        # timer's due time can land a hair after it; stopping exactly on it would miss it.
        step = math.ceil(t_s * 1000.0 - self.pos_ms + 1e-3)
        if step > 0:
            await self.dp.run_for(step, picture_only=picture_only)
            self.pos_ms += step

    async def capture(
        self, fmt: str = "jpeg", quality: int = 85, scale: float = 1.0, clip: dict | None = None
    ) -> bytes:
        """The viewport (or `clip`, CSS px {x, y, width, height}) as encoded image bytes
        (JPEG or PNG), optionally scaled down."""
        params: dict = {"format": fmt, "optimizeForSpeed": True, "captureBeyondViewport": False}
        if fmt == "jpeg":
            params["quality"] = int(quality)
        if clip is not None or scale != 1.0:
            vp = self.dp.viewport
            box = clip or {"x": 0, "y": 0, "width": vp.width, "height": vp.height}
            params["clip"] = {**{k: float(box[k]) for k in ("x", "y", "width", "height")}, "scale": float(scale)}
        r = await self.dp.call(self.cdp.send("Page.captureScreenshot", params), self.capture_timeout_s, "screenshot")
        return base64.b64decode(r["data"])


def decode(data: bytes, gray: bool = False) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_COLOR)
    if img is None:
        raise ProbeError("a screenshot could not be decoded")
    return img


def eta_note(done: int, total: int, elapsed_s: float, unit: str = "frames") -> str:
    """'123/1950 frames · 14.2/s · ETA 2 min 08 s' for progress bars and logs."""
    if done <= 0 or elapsed_s <= 0:
        return f"{done}/{total} {unit}"
    rate = done / elapsed_s
    left = max(0.0, (total - done) / rate)
    m, s = divmod(int(round(left)), 60)
    eta = f"{m} min {s:02d} s" if m else f"{s} s"
    return f"{done}/{total} {unit} · {rate:.1f}/s · ETA {eta}"


def frame_times(end_s: float, fps: float, include_end: bool = False) -> list[float]:
    """t_i = i / fps for 0 <= t_i < end_s (or <= end_s), computed from i (no drift) and put
    on the 60 Hz animation grid (exact for every rate that divides 60)."""
    n = int(round(end_s * fps))
    if include_end:
        n += 1
    return [on_grid(i / fps) for i in range(n)]


def even(n: int) -> int:
    """VP8 (4:2:0) wants even frame sizes."""
    return n - (n % 2)


__all__ = ["Stepper", "RAF_60HZ_JS", "decode", "eta_note", "frame_times", "even", "on_grid"]
