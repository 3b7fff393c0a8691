"""Frame pacing (item smoothness.frame_pacing): real-time playback with the independent
rAF sampler (browser/js/frame_sampler.js) injected before any page script.

This probe uses REAL time on purpose: frame pacing is exactly what the fake clock would
hide. It runs first, in its own fresh context, so nothing else the bench does disturbs it.
It collects per-frame data only; the scorer computes the statistics and the tier.

Beside the sampler's two clocks it keeps Chromium's own account of the same frames (a
trace of the compositor's frame reporting, browser/frame_trace.py: which vsyncs presented
a frame and which dropped the one the page was producing), and the machine's noise around
the pass (a short calibration before and after, CPU load and steal during it). When the
machine was too noisy to trust (`noise_reasons`, with this probe's noise_max_* settings)
the pass is run once more and the terminal says so; the reasons are in the evidence
(`noise.too_noisy`), where the scorer reports them beside the tier.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.browser import screencast
from skycity_bench.browser.frame_trace import FrameTrace
from skycity_bench.browser.rate_calibration import calibrate, cpu_noise, cpu_sample
from skycity_bench.browser.render_headroom import headroom
from skycity_bench.browser.session import js
from skycity_bench.common.errors import Cause, DemoCrash, DemoHang, ProbeError
from skycity_bench.evidence.frame_pacing import FramePacingEvidence
from skycity_bench.probes import probe


class Settings(BaseModel):
    """What steers the pass (scenario `probes.frame_pacing`), the machine-noise rule that
    decides a re-run included; the thresholds its figures are judged with are
    `scorers.frame_pacing`."""

    model_config = ConfigDict(extra="forbid")

    trace: bool = Field(description="keep Chromium's own frame reporting (a trace of the pass)")
    noise_calibration_s: float = Field(ge=0, description="blank-page calibration before and after the pass")
    noise_reruns: int = Field(ge=0, le=3, description="a pass too noisy by the noise rule is run this often more")
    noise_max_foreign_load: float = Field(ge=0, le=1, description="share of all CPUs other processes kept busy")
    noise_max_steal: float = Field(ge=0, le=1, description="share of CPU time the hypervisor stole")
    noise_max_calibration_p95_ms: float = Field(gt=0, description="a blank page's P95 frame interval")


def noise_reasons(noise: dict, s: Settings) -> list[str]:
    """Why the machine was too noisy to trust a pacing pass (pyperf's idea): other processes
    busy on the CPUs, time stolen by the hypervisor, or a blank page that could not hold 60 Hz
    just before or after the pass. Empty when quiet enough."""
    out = []
    cpu = noise.get("cpu") or {}
    if cpu.get("foreign_load") is not None and cpu["foreign_load"] > s.noise_max_foreign_load:
        out.append(
            f"other processes kept {cpu['foreign_load']:.0%} of the CPUs busy (limit {s.noise_max_foreign_load:.0%})"
        )
    if cpu.get("steal") is not None and cpu["steal"] > s.noise_max_steal:
        out.append(f"the hypervisor stole {cpu['steal']:.1%} of CPU time (limit {s.noise_max_steal:.0%})")
    for when in ("before", "after"):
        cal = noise.get(f"calibration_{when}") or {}
        p95 = cal.get("p95_ms")
        if p95 is not None and p95 > s.noise_max_calibration_p95_ms:
            out.append(
                f"a blank page's P95 frame interval was {p95:.1f} ms {when} the pass "
                f"(limit {s.noise_max_calibration_p95_ms:g} ms)"
            )
    return out


_READ_CHUNK = 8192


def _budget(sc) -> float:
    s = sc.probe_settings("frame_pacing")
    one = sc.duration_s + sc.timeouts.load_s + sc.timeouts.probe_grace_s + 2 * (s.noise_calibration_s + 10)
    return one * (1 + s.noise_reruns) + sc.calibration.headroom_s + 15  # the headroom scene, once


@probe(
    "frame_pacing",
    realtime=True,
    order=10,
    settings=Settings,
    evidence=FramePacingEvidence,
    description="real-time playback; rAF timestamps, performance.now() on entry, scene draw signal, "
    "Chromium's frame reporting, machine noise",
    budget=_budget,
)
async def collect(ctx) -> FramePacingEvidence:
    s = ctx.settings
    attempts: list[dict] = []
    room = await _headroom(ctx)
    for attempt in range(1 + s.noise_reruns):
        before = await _calibration(ctx)
        a = cpu_sample()
        data = await _pass(ctx)
        b = cpu_sample()
        after = await _calibration(ctx)
        noise: dict[str, Any] = {"calibration_before": before, "calibration_after": after, "cpu": cpu_noise(a, b)}
        noise["too_noisy"] = noise_reasons(noise, s)
        attempts.append(noise)
        if not noise["too_noisy"] or attempt == s.noise_reruns:
            break
        ctx.progress.log(
            f"[yellow]frame pacing: the machine was too noisy to trust the pass "
            f"({'; '.join(noise['too_noisy'])}); running it once more[/]"
        )
    if noise["too_noisy"]:
        ctx.progress.log(
            f"[yellow]frame pacing: the machine was too noisy during the pass "
            f"({'; '.join(noise['too_noisy'])}); its figures are not to be trusted[/]"
        )
    data["noise"] = noise
    data["headroom"] = room
    data["passes"] = len(attempts)
    data["noise_of_passes"] = attempts
    return FramePacingEvidence.model_validate(data)


async def _headroom(ctx) -> dict:
    """Can this machine render the standard scene at the scenario's viewport at 60 Hz
    (browser/render_headroom.py)? Said in the terminal when it cannot."""
    try:
        room = await headroom(ctx.browser, ctx.scenario)
    except (DemoHang, DemoCrash):
        raise
    except Exception as e:  # a wedged browser: headroom unknown, the pass still counts
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
    if not room["holds_60hz"]:
        ctx.progress.log(
            f"[yellow]frame pacing: this machine cannot render a standard scene at {room['viewport']} "
            f"at 60 Hz (P95 {room['p95_ms']} ms; {room['rule']}): a tier lost may be the machine's; "
            "`skycity-bench doctor` names the largest viewport that keeps 60 Hz here[/]"
        )
    return room


async def _calibration(ctx) -> dict:
    if ctx.settings.noise_calibration_s <= 0:
        return {"skipped": True}
    try:
        return await calibrate(ctx.browser, ctx.scenario, ctx.settings.noise_calibration_s)
    except Exception as e:  # a wedged browser: the noise stays unknown, the pass still counts
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}


async def _pass(ctx) -> dict:
    """One real-time pass: the demo played for the scenario's duration with the sampler (and
    Chromium's trace, and the video when filmed), then the sampler's frames read back."""
    duration = ctx.scenario.duration_s
    dp = await ctx.open_page(init_scripts=[js("frame_sampler.js")], goto=False)
    trace = FrameTrace(dp.context, dp.page) if ctx.settings.trace else None
    # the real-time video: only when the scenario films this pass
    cap: screencast.NoCapture | screencast.Screencast = screencast.NoCapture()
    try:
        if trace:
            await trace.start()  # before navigation: its navigationStart is the clock anchor
        await dp.goto()
        cap = await _capture(ctx, dp)
        await _play(ctx, dp, duration)
        n, t0, t0_raf, errors, painted = await dp.evaluate(
            "[__SKYCITY__.frames ? __SKYCITY__.frames.count() : -1, __SKYCITY__.bench.t0,"
            " __SKYCITY__.bench.t0Raf, __SKYCITY__.bench.errors,"
            " __SKYCITY__.frames ? __SKYCITY__.frames.painted() : null]",
            what="reading the frame sampler",
        )
        if trace:
            # After the page answered (a hung renderer never flushes its part of a trace:
            # it is caught just above in 5 s); the data of a long pass takes a while to come.
            await trace.stop(10 + duration / 2)
        if n < 0:
            raise ProbeError(
                "the frame sampler is missing from the page (was it removed by the demo?)", cause=Cause.PAGE
            )
        ts, now, drew, main = await _read_frames(dp, n)
        picture = await _picture(dp)
    except (DemoHang, DemoCrash):
        # The page hangs or died: its renderer never flushes a trace, and the runner restarts
        # the browser (which ends the trace with it): do not wait for it.
        trace = None
        raise
    finally:
        if trace:
            await trace.stop(2)  # a pass that failed otherwise: end the trace, quickly
        await cap.stop()
        await dp.close()
    # Keep frames from t = 0 (first frame after load) to the end of the played duration.
    end_ms = duration * 1000 + 20
    keep = [i for i, t in enumerate(ts) if t >= t0_raf and t - t0_raf <= end_ms]
    return {
        "duration_s": duration,
        "frames": len(keep),
        "raf_ms": [round(ts[i] - t0_raf, 3) for i in keep],
        "entry_ms": [round(now[i] - t0, 3) for i in keep],
        # entry_ms + this = performance.now() on entry on the rAF timestamps' origin (raf_ms)
        "entry_to_raf_ms": round(t0 - t0_raf, 3),
        "drew": [int(drew[i]) for i in keep],
        "main_ms": [main[i] for i in keep] if len(main) == len(ts) else None,
        "chromium": _chromium_frames(trace, dp.url, t0_raf, end_ms),
        "page_errors": (errors or [])[:20],
        "dialogs": dp.events.dialogs[:20],
        **cap.evidence(),
        "painted_frames": painted,
        "picture": picture,
    }


# The region of the picture read for flatness: the largest canvas (the scene of nearly every
# demo), else the viewport. Overlays painted over it (a control panel) are in it too.
_SCENE_RECT = """() => {
  let best = null, area = 0;
  for (const c of document.querySelectorAll('canvas')) {
    const r = c.getBoundingClientRect();
    const x0 = Math.max(0, r.left), y0 = Math.max(0, r.top);
    const x1 = Math.min(innerWidth, r.right), y1 = Math.min(innerHeight, r.bottom);
    if ((x1 - x0) * (y1 - y0) > area) { area = (x1 - x0) * (y1 - y0); best = [x0, y0, x1, y1]; }
  }
  return best;
}"""


async def _picture(dp) -> dict[str, Any] | None:
    """How flat the picture is at the end of the pass: the share of the scene's pixels in its
    most common colour (16 levels a channel), so a report can tell a page that drew a blank
    (one flat colour) from one that drew a scene. None when the screenshot could not be taken
    (the pass's figures stand without it)."""
    try:
        rect = await dp.evaluate_isolated(_SCENE_RECT, timeout=5, what="finding the scene canvas")
        img = await dp.frame(timeout=10)
    except (DemoHang, DemoCrash):
        raise
    except Exception:
        return None
    region = "viewport"
    if rect:
        x0, y0, x1, y1 = (int(round(v)) for v in rect)
        if x1 - x0 >= 8 and y1 - y0 >= 8:
            img, region = img[y0:y1, x0:x1], f"canvas {x1 - x0}x{y1 - y0} at {x0},{y0}"
    q = (img[::2, ::2] >> 4).astype(np.int32).reshape(-1, 3)
    codes = (q[:, 0] << 8) | (q[:, 1] << 4) | q[:, 2]
    counts = np.bincount(codes, minlength=4096)
    top = int(counts.argmax())
    bgr = [((top >> 8) & 15) * 17, ((top >> 4) & 15) * 17, (top & 15) * 17]
    return {"region": region, "flat_share": round(float(counts[top]) / max(1, codes.size), 4), "colour_bgr": bgr}


async def _play(ctx, dp, duration: float) -> None:
    """Let the demo play in real time for `duration` s (a little more: the last frame's
    interval ends after it), showing the time left; a page that crashed or closed ends it."""
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


async def _read_frames(dp, n: int) -> tuple[list[float], list[float], list[int], list[float]]:
    """The sampler's `n` frames: (rAF timestamps, performance.now() on entry, drew, the main
    thread's time of the frame), read in chunks (one page call per _READ_CHUNK frames)."""
    ts: list[float] = []
    now: list[float] = []
    drew: list[int] = []
    main: list[float] = []
    for start in range(0, n, _READ_CHUNK):
        part = await dp.evaluate(
            "([a, b]) => __SKYCITY__.frames.read(a, b)",
            [start, start + _READ_CHUNK],
            timeout=10,
            what="reading the frame sampler",
        )
        ts += part["ts"]
        now += part["now"]
        drew += part["drew"]
        main += part.get("main") or []
    return ts, now, drew, main


async def _capture(ctx, dp) -> screencast.NoCapture | screencast.Screencast:
    """The real-time video of this pass when the scenario films it (probes.realtime_capture:
    the measured pass, or the capture probe's own second pass, which sets
    `realtime_capture_pass` on its context)."""
    return await screencast.for_pass(
        dp,
        ctx.scenario.probe_settings("realtime_capture"),
        second=bool(getattr(ctx, "realtime_capture_pass", False)),
        file=ctx.file,
        duration_s=ctx.scenario.duration_s,
        probe_grace_s=ctx.scenario.timeouts.probe_grace_s,
    )


def _chromium_frames(trace: FrameTrace | None, url: str, t0_raf: float, end_ms: float) -> dict:
    """Chromium's frames of the pass on the sampler's t = 0 (rAF clock), raw."""
    src = "trace: PipelineReporter (disabled-by-default-devtools.timeline.frame), the demo's renderer"
    if trace is None:
        return {"source": src, "error": "tracing is off (probes.frame_pacing.trace: false)"}
    f = trace.frames(url)
    if "error" in f:
        return {"source": src, "error": f["error"]}
    keep = [i for i, t in enumerate(f["t_ms"]) if -20 <= t - t0_raf <= end_ms]
    return {
        "source": src,
        "t_ms": [round(f["t_ms"][i] - t0_raf, 3) for i in keep],
        "fate": "".join(f["fate"][i] for i in keep),
        "compositor_animation": "".join(f["compositor_animation"][i] for i in keep),
    }
