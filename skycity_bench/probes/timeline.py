"""Timeline facts and camera motion (items camera.phases, camera.motion, camera.ending).

Under the fake clock the demo is stepped from t = 0 to `end_s` (65 s: the tour plus five
seconds after it) at `sample_fps`; at each step the bench reads the hook's getState (the
demo's own claim of its phase: it locates, it is reported as a claim) and captures a PNG
scaled to `analysis_width`, which a worker thread registers against the previous one
(probes/_motion.py) while the browser renders the next. In the last `ending_window_s` of
the tour it looks for the city name (probes/_city_name.py). Frames of the first seconds
and of the time after the tour are kept as thumbnails to tell a jump back to the start.

Sharing frames with the recording: stepping the demo through 65 s means running 3900
animation frames of its code, which costs as much as the screenshots on a heavy demo. So
the recording (order 55) samples the timeline in the same pass, from the frames it
captures anyway, and writes the result beside its video; this probe (order 60) takes that
result when it was sampled with these very settings, and steps the demo itself otherwise
(`--probe timeline` alone, or a sample rate that does not divide the recording's fps).
It collects measurements only; cuts, the reset verdict and findings are judged by
scorers/camera.py from these series with the thresholds below, so `rescore` can apply new
thresholds without a browser.

Note: the fake clock does not drive CSS animations or transitions; a closing title that
fades in by CSS runs on real time and is seen in whatever state real time left it.
"""

from __future__ import annotations

import hashlib
import json
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ProbeError
from ..evidence.timeline import TimelineEvidence
from . import _city_name, probe
from ._stepper import RAF_60HZ_JS, Stepper, eta_note, frame_times
from ._tour import TimelineSampler


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sample_fps: float = Field(10, gt=0, le=60)
    end_s: float = Field(65, gt=0, le=600)
    tour_s: float = Field(60, gt=0, le=600)
    opening_window_s: float = Field(5, gt=0)
    ending_window_s: float = Field(10, gt=0)
    analysis_width: int = Field(480, ge=64, le=3840)
    city_name_checks: int = Field(3, ge=1, le=20)
    name_diff_level: int = Field(40, ge=1, le=255, description="a pixel of the name's clip changed by more than this")
    cuts_from_s: float = Field(0.5, ge=0)
    cut_window_s: float = Field(1.0, gt=0)
    cut_min_residual: float = Field(0.05, gt=0, le=1)
    cut_residual_factor: float = Field(3.0, ge=1)
    cut_max_inlier_ratio: float = Field(0.3, ge=0, le=1)
    jump_min_share: float = Field(0.15, gt=0)
    jump_factor: float = Field(5.0, ge=1)
    reset_match: float = Field(0.04, gt=0, le=1)
    reset_depart: float = Field(0.08, gt=0, le=1)
    jerk_smoothing_s: float = Field(0.3, ge=0)
    max_cut_frames: int = Field(12, ge=0)
    budget_s: float = Field(600, gt=0)


def _budget(sc) -> float:
    return Settings.model_validate(sc.probes.get("timeline") or {}).budget_s + sc.timeouts.load_s


@probe("timeline", order=60, settings=Settings, evidence=TimelineEvidence, budget=_budget,
       description="fake-clock stepping 0–65 s: hook phases, city name, camera registration, reset at 60 s")
async def collect(ctx) -> TimelineEvidence:
    s: Settings = ctx.settings
    shared = _from_recording(ctx, s)
    if shared is not None:
        return TimelineEvidence.model_validate(shared)
    dp = await ctx.open_page(fake_clock=True, init_scripts=[RAF_60HZ_JS, _city_name.CANVAS_TEXT_JS])
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="timeline")
    try:
        return TimelineEvidence.model_validate(await _own_pass(ctx, dp, s, pool))
    finally:
        pool.shutdown(wait=True)
        await dp.close()


def settings_key(s: Settings) -> str:
    """Identifies the settings a pass was sampled with (a pass with others is not reused)."""
    return hashlib.sha256(json.dumps(s.model_dump(), sort_keys=True).encode()).hexdigest()[:16]


def _from_recording(ctx, s: Settings) -> dict | None:
    """The recording's pass, when it sampled the timeline with these very settings."""
    rec = ctx.artifacts.get("recording")
    if rec is not None and rec.status == "error" and (rec.data or {}).get("demo_failure"):
        # Stepping the same demo under the same fake clock again would hang or crash at the
        # same moment: say so at once instead of spending the time limits a second time.
        raise ProbeError(f"not stepped again: the recording's pass of this demo stopped ({rec.error})",
                         data=(rec.data or {}).get("timeline_partial") or {})
    if rec is None or rec.status != "ok":
        return None
    tp = (rec.data or {}).get("timeline_pass") or {}
    if tp.get("settings") != settings_key(s) or not tp.get("file"):
        return None
    try:
        data = json.loads((ctx.out_dir / tp["file"]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    data["stepped_by"] = "recording"
    return data


async def _own_pass(ctx, dp, s: Settings, pool) -> dict:
    st = await Stepper(dp).start()
    sampler = TimelineSampler(ctx, dp, st, s, pool)
    await sampler.prepare()
    times = frame_times(s.end_s, s.sample_fps, include_end=True)
    step_s = 0.0
    task = ctx.progress.task(f"timeline: {s.end_s:g} s at {s.sample_fps:g} fps", len(times), unit="frames")
    started = time.monotonic()
    try:
        for i, t in enumerate(times):
            c0 = time.perf_counter()
            await st.to(t)
            step_s += time.perf_counter() - c0
            await sampler.sample(st.frame_s)     # = t, except for t = 0, which load already passed
            if i % 5 == 0 or i == len(times) - 1:
                task.update(i + 1, note=eta_note(i + 1, len(times), time.monotonic() - started))
        await sampler.drain()
    except ProbeError as e:
        e.data = {**(e.data or {}), **sampler.partial()}
        raise
    finally:
        task.close()
    data = sampler.result("timeline")
    data["spent_s"]["step"] = round(step_s, 2)
    return data
