"""What a viewer saw, in real time: Chromium's screencast of a page (CDP
Page.startScreencast on the page's own CDP session), written as the real-time video
(media/realtime_video.py) for 录屏复核.

Every frame is asked for (everyNthFrame 1) at a reduced size (the scenario's max_width x
max_height, aspect kept); each frame carries Chromium's swap timestamp (seconds since the
epoch, the clock performance.timeOrigin is on), so video time = timestamp - (timeOrigin +
the sampler's t = 0): a stall of the page is a gap between two frame timestamps and a held
frame in the video. Frames are acknowledged at once (Chromium sends no more until it has
its acks); decoding and encoding happen off the event loop, behind a bounded queue.

`for_pass(dp, settings, ...)` is the frame-pacing probe's one hook: it starts a capture
when the capture's settings (probes.realtime_capture, handed in by the probe) put it in that
pass and otherwise returns a capture that does nothing, so the probe's code is the same
either way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skycity_bench.media.realtime_video import RealtimeVideo

log = logging.getLogger(__name__)

VIDEO_NAME = "realtime/realtime.webm"  # relative to the run folder
_CALL_S = 5.0  # a CDP call into a wedged page: give up after this


class NoCapture:
    """The capture when none runs in this pass."""

    active = False

    async def stop(self) -> None:
        return None

    def evidence(self) -> dict:
        return {}


class Screencast:
    """One page's screencast into a RealtimeVideo."""

    active = True

    def __init__(
        self,
        dp,
        path: Path,
        rel: str,
        settings,
        duration_s: float,
        *,
        low_priority: bool,
        pass_name: str,
        drain_timeout_s: float,
    ):
        self.dp = dp
        self.path, self.rel = path, rel
        self.s = settings
        self.duration_s = duration_s
        self.low_priority = low_priority
        self.pass_name = pass_name
        self.drain_timeout_s = drain_timeout_s
        self.cdp: Any = None  # playwright's CDPSession (start())
        self.video: RealtimeVideo | None = None
        self.zero: dict = {}
        self._acks: set = set()
        self._stopped = False
        self._started_at: float | None = None
        self._stop_error: str | None = None
        self._encoder_finished: bool | None = None
        self.wall_s = 0.0

    async def start(self) -> Screencast:
        # Video time 0 is the sampler's t = 0 (first animation frame after load), on the
        # epoch clock Chromium stamps screencast frames with.
        # (`__SKYCITY__`: the bench's hidden namespace, bound by DemoPage.evaluate where the page
        # has one; the older global otherwise)
        z = await self.dp.evaluate(
            "[performance.timeOrigin, (() => { try { return __SKYCITY__.bench.t0Raf; } catch (e) {"
            " return window.__skycityBench ? window.__skycityBench.t0Raf : null; } })()]",
            what="reading the page's time origin",
        )
        origin, t0_raf = float(z[0]), z[1]
        t0 = float(t0_raf) if t0_raf is not None else float(self.dp.t0_ms or 0.0)
        self.zero = {
            "time_origin_ms": round(origin, 3),
            "t0_ms": round(t0, 3),
            "t0_clock": "rAF timestamp of t = 0" if t0_raf is not None else "performance.now() at t = 0",
        }
        self.video = RealtimeVideo(
            self.path,
            zero_epoch_s=(origin + t0) / 1000.0,
            duration_s=self.duration_s,
            fps=self.s.fps,
            bitrate_mbps=self.s.bitrate_mbps,
            queue_frames=self.s.queue_frames,
            low_priority=self.low_priority,
        )
        self.cdp = await self.dp.context.new_cdp_session(self.dp.page)
        self.cdp.on("Page.screencastFrame", self._on_frame)
        self._started_at = time.monotonic()
        await asyncio.wait_for(
            self.cdp.send(
                "Page.startScreencast",
                {
                    "format": "jpeg",
                    "quality": self.s.jpeg_quality,
                    "maxWidth": self.s.max_width,
                    "maxHeight": self.s.max_height,
                    "everyNthFrame": 1,
                },
            ),
            _CALL_S,
        )
        return self

    def _on_frame(self, ev: dict) -> None:
        # Ack first: Chromium holds the next frame until it has this one's ack.
        t = asyncio.ensure_future(self._ack(ev.get("sessionId")))
        self._acks.add(t)
        t.add_done_callback(self._acks.discard)
        if self._stopped or self.video is None:
            return
        ts = (ev.get("metadata") or {}).get("timestamp")
        if ts is None:  # Chromium always stamps frames; without one the time is unknown
            ts = time.time()
        self.video.offer(float(ts), ev.get("data") or "")

    async def _ack(self, sid) -> None:
        try:
            await self.cdp.send("Page.screencastFrameAck", {"sessionId": sid})
        except Exception:  # the page closed or crashed: nothing left to acknowledge
            pass

    async def stop(self) -> None:
        """Stop the screencast and wait for the encoder (bounded); safe to call twice."""
        if self._stopped or self.video is None:
            return
        self._stopped = True
        self.wall_s = time.monotonic() - (self._started_at or time.monotonic())
        try:
            await asyncio.wait_for(self.cdp.send("Page.stopScreencast"), _CALL_S)
        except Exception as e:
            self._stop_error = f"stopping the screencast: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        loop = asyncio.get_running_loop()
        self._encoder_finished = await loop.run_in_executor(None, self.video.close, self.drain_timeout_s)
        try:
            await asyncio.wait_for(self.cdp.detach(), _CALL_S)
        except Exception:
            pass

    def evidence(self) -> dict:
        """The capture's figures for the probe's evidence (under `realtime_capture`)."""
        if self.video is None:
            return {}
        fig = self.video.figures()
        ok = self._encoder_finished and not fig["encoder_error"] and fig["frames_shown"] > 0
        problem = None
        if not ok:
            problem = (
                fig["encoder_error"]
                or self._stop_error
                or ("no frame was captured" if fig["frames_shown"] == 0 and not fig["frames_dropped"] else None)
                or (
                    f"the encoder did not finish within {self.drain_timeout_s:g} s"
                    if self._encoder_finished is False
                    else "the capture did not finish"
                )
            )
        return {
            "realtime_capture": {
                "file": self.rel if ok and self.path.is_file() else None,
                "pass": self.pass_name,
                "problem": problem,
                "zero": self.zero,
                "duration_s": self.duration_s,
                "capture_wall_s": round(self.wall_s, 2),
                "max_size": [self.s.max_width, self.s.max_height],
                "jpeg_quality": self.s.jpeg_quality,
                **fig,
            }
        }


async def for_pass(
    dp,
    s,
    *,
    second: bool,
    file: Callable[[str], tuple[Path, str]],
    duration_s: float,
    probe_grace_s: float,
) -> NoCapture | Screencast:
    """The frame-pacing probe's hook: a running capture when this pass is to be captured
    (the capture's settings `s`, probes.realtime_capture: its capture_in is `measured_pass`,
    or this is the capture's own `second` pass), else NoCapture. `file` gives the video's
    (path, name in the run folder). Never raises: a capture that cannot start is recorded,
    and the measurement goes on without it."""
    if not second and (s.when == "never" or s.capture_in != "measured_pass"):
        return NoCapture()
    path, rel = file(VIDEO_NAME)
    # The measured pass's probe budget has only the scenario's grace beyond the demo time:
    # the encoder's catching up there gets half of it; the second pass's budget has its own.
    drain = s.encode_timeout_s if second else min(s.encode_timeout_s, probe_grace_s / 2)
    pass_name = "second_pass" if second else "measured_pass"
    cap = Screencast(dp, path, rel, s, duration_s, low_priority=not second, pass_name=pass_name, drain_timeout_s=drain)
    try:
        return await cap.start()
    except Exception as e:
        log.debug("screencast did not start", exc_info=True)
        if cap.video is not None:
            cap.video.close(5)
        return _Failed(
            f"the screencast did not start: {str(e).splitlines()[0] if str(e) else type(e).__name__}", pass_name
        )


class _Failed(NoCapture):
    def __init__(self, why: str, pass_name: str):
        self.why, self.pass_name = why, pass_name

    def evidence(self) -> dict:
        return {"realtime_capture": {"file": None, "pass": self.pass_name, "problem": self.why}}
