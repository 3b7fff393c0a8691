"""The tour pass: one fake-clock walk through the demo's 0–65 s that yields up to two
artifacts, the recording's frames (video, keyframes, contact sheet: probes/recording.py) and
the timeline's samples (hook states, camera registration, city-name checks: probes/timeline.py).

Stepping a demo through 65 s runs 3900 of its animation frames, which costs as much as the
screenshots on a heavy demo, so it is done once: `tour_pass` merges the video's frame times
and the timeline's sample times into one time-ordered walk; at a time both want, the
timeline registers the very frame the video captured. The recording probe declares that its
pass `produces` the timeline's evidence (ProbeSpec.produces): when both are chosen the
runner runs the pass once and stores one record per artifact; the timeline probe run alone
walks the same pass without the video.

`TimelineSampler.sample(t)` takes one timeline sample at bench time t: the hook's getState,
a frame (captured here as a PNG scaled to the analysis width, or the video's frame when the
video took one at that time), registered against the previous one in a worker thread
(probes/_motion.py), and the city-name checks when one is due (probes/_city_name.py).
`result()` gives the timeline's evidence, the same whichever probe stepped the demo.
"""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np

from skycity_bench.analysis import motion as _motion
from skycity_bench.browser.clock_budget import PassBudget
from skycity_bench.browser.hook import HookCall
from skycity_bench.common.errors import DemoSlow, ProbeError
from skycity_bench.probes import _city_name, _scene_graph
from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper, decode, eta_note, frame_times, on_grid


class _Analyzer:
    """Runs in one worker thread, in frame order: decode, register, keep thumbnails."""

    def __init__(self, s):
        self.s = s
        self.prev = None
        self.frames: dict[str, list[Any]] = {
            k: [] for k in ("t_s", "dx", "dy", "scale", "rot_deg", "residual", "raw_diff", "inlier_ratio", "features")
        }
        self.thumbs: dict[int, bytes] = {}
        self.opening: list[tuple[float, np.ndarray]] = []
        self.end_ref: tuple[float, np.ndarray] | None = None
        self.post: list[tuple[float, np.ndarray]] = []
        self.shape = None
        self.work_s = 0.0

    def feed(self, t: float, shot: bytes) -> None:
        t0 = time.perf_counter()
        img = decode(shot)
        if img.shape[1] > self.s.analysis_width:  # a full-size frame from the recording
            h = max(2, int(round(img.shape[0] * self.s.analysis_width / img.shape[1])))
            img = cv2.resize(img, (self.s.analysis_width, h), interpolation=cv2.INTER_AREA)
        gray = _motion.analysis_gray(img, self.s.analysis_width)
        self.shape = gray.shape  # what the registration's pixels are
        f = self.frames
        f["t_s"].append(round(t, 4))
        r: dict[str, Any]
        if self.prev is None:
            r = {
                "dx": None,
                "dy": None,
                "scale": None,
                "rot_deg": None,
                "residual": None,
                "raw_diff": None,
                "features": None,
                "inliers": 0,
            }
        else:
            r = _motion.register(self.prev, gray)
        for k in ("dx", "dy", "scale", "rot_deg", "residual", "raw_diff"):
            f[k].append(None if r[k] is None else round(r[k], 5))
        feats = r.get("features")
        f["features"].append(feats)
        f["inlier_ratio"].append(round(r["inliers"] / feats, 4) if feats else None)
        self.prev = gray
        ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 88])
        self.thumbs[len(f["t_s"]) - 1] = jpg.tobytes()
        tn = _motion.tiny(img)
        if t <= self.s.opening_window_s:
            self.opening.append((t, tn))
        if t < self.s.tour_s:
            self.end_ref = (t, tn)
        else:
            self.post.append((t, tn))
        self.work_s += time.perf_counter() - t0

    def reset_series(self) -> dict:
        if not self.opening or self.end_ref is None:
            return {"post": [], "end_ref_s": None, "end_vs_opening": None}
        post = []
        for t, tn in self.post:
            d = [(_motion.tiny_distance(tn, o), ot) for ot, o in self.opening]
            dmin, ot = min(d)
            post.append(
                {
                    "t_s": round(t, 3),
                    "d_open": round(dmin, 4),
                    "open_t_s": round(ot, 3),
                    "d_end": round(_motion.tiny_distance(tn, self.end_ref[1]), 4),
                }
            )
        end_open = min(_motion.tiny_distance(self.end_ref[1], o) for _, o in self.opening)
        return {"post": post, "end_ref_s": round(self.end_ref[0], 3), "end_vs_opening": round(end_open, 4)}


def _phase_of(v) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        return None
    return int(v)


class TimelineSampler:
    def __init__(self, ctx, dp, stepper, s, pool):
        self.ctx, self.dp, self.st, self.s, self.pool = ctx, dp, stepper, s, pool
        self.scale = min(1.0, s.analysis_width / dp.viewport.width)
        self.analyzer = _Analyzer(s)
        self.pending: collections.deque = collections.deque()
        self.states: dict[str, list[Any]] = {"t_s": [], "phase": [], "time": [], "ended": []}
        self.hook_state: dict[str, Any] = {"ok": 0, "failed": 0, "first_error": None, "invalid_phase": 0}
        self.fails = 0
        self.name = None
        self.desc: Any = None  # the hook's describe() answer (prepare)
        self.name_checks: list[dict] = []
        n = s.city_name_checks
        self.checks_at = sorted(s.tour_s - s.ending_window_s * (k + 0.5) / n for k in range(n))
        self.spent = {"hook": 0.0, "capture": 0.0, "wait": 0.0, "name": 0.0}
        self.started = time.monotonic()

    async def prepare(self) -> None:
        """Read the hook's cityName and arm the canvas text log (before stepping)."""
        self.desc = await self.dp.hook.describe()
        v = self.desc.value if self.desc.ok and isinstance(self.desc.value, dict) else {}
        name = v.get("cityName")
        self.name = name.strip() if isinstance(name, str) and name.strip() else None
        if self.name:
            await _city_name.arm(self.dp, self.name)

    async def sample(self, now: float, frame: bytes | None = None) -> None:
        """One sample at bench time `now` (the animation frame on screen); `frame` is an
        encoded screenshot of it when the caller has one already."""
        c1 = time.perf_counter()
        if self.fails < 3:  # a hook that keeps failing is not asked 650 times
            self._state(now, await self.dp.hook.call("getState"))
        c2 = time.perf_counter()
        self.spent["hook"] += c2 - c1
        if frame is None:
            frame = await self.st.capture("png", scale=self.scale)
        c3 = time.perf_counter()
        self.spent["capture"] += c3 - c2
        loop = asyncio.get_running_loop()
        self.pending.append(loop.run_in_executor(self.pool, self.analyzer.feed, now, frame))
        while len(self.pending) > 6:  # bounded: the browser never runs far ahead
            await self.pending.popleft()
        c4 = time.perf_counter()
        self.spent["wait"] += c4 - c3
        while self.checks_at and self.checks_at[0] <= now + 1e-6:
            self.checks_at.pop(0)
            if self.name:
                self.name_checks.append(
                    await _city_name.check(self.dp, self.st, self.name, now, self.s.name_diff_level)
                )
        self.spent["name"] += time.perf_counter() - c4

    def _state(self, now: float, r) -> None:
        st, hs = self.states, self.hook_state
        if r.ok and isinstance(r.value, dict):
            self.fails = 0
            hs["ok"] += 1
            ph = _phase_of(r.value.get("phase"))
            hs["invalid_phase"] += ph is None
            tv = r.value.get("time")
            st["t_s"].append(round(now, 3))
            st["phase"].append(ph)
            st["time"].append(round(tv, 3) if isinstance(tv, (int, float)) and not isinstance(tv, bool) else None)
            st["ended"].append(bool(r.value.get("ended")))
        else:
            self.fails += 1
            hs["failed"] += 1
            hs["first_error"] = hs["first_error"] or (r.error or "getState returned no object")

    def phases(self) -> list[dict]:
        return _motion.phase_changes([{"t_s": t, "phase": p} for t, p in zip(self.states["t_s"], self.states["phase"])])

    def partial(self) -> dict:
        """What a failed pass still tells: how far the demo got, its phases until then."""
        return {"reached_s": round(self.st.frame_s, 3), "states": self.states, "phases": self.phases()}

    async def drain(self) -> None:
        while self.pending:
            await self.pending.popleft()

    def result(self, stepped_by: str) -> dict:
        s, a, vp = self.s, self.analyzer, self.dp.viewport
        data = {
            "stepped_by": stepped_by,
            "sample_fps": s.sample_fps,
            "end_s": s.end_s,
            "tour_s": s.tour_s,
            "viewport": {"width": vp.width, "height": vp.height},
            "analysis_size": None if a.shape is None else [a.shape[1], a.shape[0]],
            # CSS px of the viewport per registration px (also right at a device scale factor > 1)
            "css_per_px": round(vp.width / a.shape[1], 6) if a.shape else round(1.0 / self.scale, 6),
            "city_name": self.name,
            "hook": {"describe": "ok" if self.desc.ok else self.desc.error, "getState": self.hook_state},
            "states": self.states,
            "phases": self.phases(),
            "frames": a.frames,
            "reset": a.reset_series(),
            "name_checks": self.name_checks,
            "wall_s": round(time.monotonic() - self.started, 2),
            "analysis_cpu_s": round(a.work_s, 2),
            "spent_s": {k: round(v, 2) for k, v in self.spent.items()},
            "page_errors": self.dp.events.page_errors[:10],
        }
        data["evidence_frames"] = _save_frames(self.ctx, s, a, data)
        return data


def _save_frames(ctx, s, analyzer: _Analyzer, data: dict) -> dict:
    """Thumbnails for reviewers: both sides of every cut the current thresholds see, and the
    last frame of the tour beside the frames after it."""
    t = analyzer.frames["t_s"]
    width = data["analysis_size"][0] if data["analysis_size"] else s.analysis_width
    # the cuts the timeline's cut rule finds (the camera scorer's rule, written once in the
    # scenario); the scorer judges the stored series again on every (re)score
    cuts = _motion.detect_cuts(analyzer.frames, fps=s.sample_fps, width_px=width, s=s.cut_rule)
    out: dict = {"cuts": {}, "ending": []}

    def save(i: int, label: str) -> str:
        path, rel = ctx.file(f"timeline/{label}_{t[i]:06.2f}s.jpg")
        path.write_bytes(analyzer.thumbs[i])
        return rel

    for c in cuts[: s.max_cut_frames]:
        i = c["i"]
        out["cuts"][f"{c['t_s']:.3f}"] = {"before": save(i - 1, "cut_before"), "after": save(i, "cut_after")}
    idx = [i for i, tt in enumerate(t) if tt >= s.tour_s - 0.5]
    picks = sorted({idx[0], *[i for i in idx if abs(t[i] - round(t[i])) < 1e-6 and t[i] > s.tour_s]} if idx else set())
    out["ending"] = [{"t_s": t[i], "file": save(i, "ending")} for i in picks]
    if t:
        out["opening"] = {"t_s": t[0], "file": save(0, "opening")}
    return out


def _stopped(st, t_next: float, end_s: float, why: str, budget: PassBudget, steps_done: int) -> dict:
    """Where and why a pass stopped early, with the one line the terminal and the camera
    items' reason give."""
    at = round(st.frame_s, 3)
    rate = steps_done / budget.elapsed_s() if budget.elapsed_s() > 0 else 0.0
    reason = (
        f"{why} after {budget.elapsed_s():.0f} s, at demo time {at:g} s of {end_s:g} s "
        f"({rate:.1f} steps per wall second: the demo renders slowly here)"
    )
    return {
        "at_s": at,
        "next_s": round(t_next, 3),
        "reason": reason,
        "message": f"the tour pass stopped early: {reason}; the timeline needs the whole tour (0–{end_s:g} s)",
    }


def density_frame_times(
    sample_times: list[float], offsets_frames: list[int], densify_points: int, claim_frames: Sequence[int] = ()
) -> dict:
    """What the density analysis takes from the tour instead of replaying 20–35 s
    (DensityFrames below, probes/density.py reads them): {"claims_at": every time the
    hook's claims are asked at (every time a sample may be taken at: the samples, and the
    `densify_points` points between each two neighbouring samples where a densified sample
    can fall; and t + k / 60 s from each of those for k in `claim_frames`, the still-point
    test's views), "frames_at": every 60 Hz frame a sample at any of those times
    needs (t + k / 60 s for k in offsets_frames, which holds 0, the pair's Δ, the other
    pairs' frames and the views)}. All on the 60 Hz animation grid, sorted, so tour_times
    can merge them with the video's and the timeline's steps; every claims_at time is among
    frames_at when claim_frames is among offsets_frames."""
    ts = sorted({round(float(t), 6) for t in sample_times})
    claims = set(ts)
    for a, b in zip(ts, ts[1:]):
        for k in range(1, densify_points + 1):
            claims.add(round(a + (b - a) * k / (densify_points + 1), 3))
    at = sorted({on_grid(t) for t in claims})
    frames_at = sorted({on_grid(t + k / 60.0) for t in at for k in set(offsets_frames) | {0}})
    claims_at = sorted({on_grid(t + k / 60.0) for t in at for k in set(claim_frames) | {0}})
    return {"claims_at": claims_at, "frames_at": frames_at}


class DensityFrames:
    """The density probe's part of the tour pass (capture once): every frame
    a density sample in the dense window could need (density_frame_times: the samples, every
    point a densified sample can fall on, and the other pairs' frames), as the lossless PNG
    the density probe's own replay takes (DemoPage.screenshot_png), with the page's clock at
    each; and the hook's getDynamicObjects at every possible sample time, asked right after
    that frame, as the density probe asks it. Written under `recordings/density_frames/`
    with `index.json`, which the recording's evidence names (density_frames); the density
    probe reads them there (probes/density.py: TourFrames) instead of re-playing the window.

    The frames are the density probe's only: they are removed once it has read them
    (probes/density.py), so a run folder does not keep ~200 full-size PNGs."""

    DIR = "recordings/density_frames"

    def __init__(
        self,
        ctx,
        sample_times: list[float],
        delta_frames: int,
        other_frames: list[int],
        densify_points: int,
        view_frames: Sequence[int] = (),
        scene=None,
    ):
        self.ctx = ctx
        # density's Settings when the three.js scene graph may locate claims without a hook
        # (probes/_scene_graph.py; its watch is then on the tour's page), else None
        self.scene = scene
        self.locator: dict = _scene_graph.locator(None)
        self.sample_times, self.delta_frames = sample_times, delta_frames
        self.other_frames, self.densify_points = list(other_frames), densify_points
        self.view_frames = list(view_frames)  # the still-point test's views: frames and claims
        self.desc: HookCall | None = None  # the hook's describe() answer (prepare)
        self.claims_keys: set[int] = set()
        self.frames: dict[str, dict] = {}
        self.claims: dict[str, dict] = {}
        self.bytes = 0
        self.capture_s = 0.0
        self.index_rel: str | None = None

    async def prepare(self, dp) -> list[float]:
        """Ask describe() and choose what locates the claims (the hook, else the three.js scene
        graph: probes/_scene_graph.py; a sample reads claims only with one) and return the
        frame times to step to: the other pairs' frames and the still-point views (frames and
        claims) only with claims, as the probe takes them."""
        self.desc = desc = await dp.hook.describe()
        self.locator = await _scene_graph.choose(dp, desc.ok, self.scene is not None)
        on = self.locator["kind"] != "none"
        offsets = [0, self.delta_frames] + (self.other_frames + self.view_frames if on else [])
        got = density_frame_times(self.sample_times, offsets, self.densify_points, self.view_frames if on else [])
        self.claims_keys = {int(round(t * 60)) for t in got["claims_at"]} if on else set()
        return got["frames_at"]

    async def take(self, dp, t: float) -> None:
        key = int(round(t * 60))
        c0 = time.perf_counter()
        png = await dp.screenshot_png()
        now = await dp.now_s()
        self.capture_s += time.perf_counter() - c0
        path, _ = self.ctx.file(f"{self.DIR}/f{key:06d}.png")
        path.write_bytes(png)
        self.bytes += len(png)
        self.frames[str(key)] = {"file": path.name, "now_s": now}
        if key in self.claims_keys:
            if self.locator["kind"] == _scene_graph.KIND:
                ok, value, error = await _scene_graph.claims(dp, self.scene)
            else:
                hc = await dp.hook.call("getDynamicObjects")
                ok, value, error = hc.ok, hc.value if hc.ok else None, hc.error
            self.claims[str(key)] = {"ok": ok, "value": value, "error": error}

    def finish(self, dp) -> dict:
        """Writes index.json; the figures for the recording's evidence (density_frames)."""
        d = self.desc
        index = {
            "version": 1,
            "delta_frames": self.delta_frames,
            "other_frames": self.other_frames,
            "view_frames": self.view_frames,
            "hook": {
                "ok": bool(d and d.ok),
                "value": d.value if d and d.ok else None,
                "error": None if d is None else d.error,
            },
            "locator": self.locator,
            "frames": self.frames,
            "claims": self.claims,
            "page_errors": dp.events.page_errors[:20],
        }
        path, self.index_rel = self.ctx.file(f"{self.DIR}/index.json")
        path.write_text(json.dumps(index))
        return {
            "index": self.index_rel,
            "frames": len(self.frames),
            "claims": len(self.claims),
            "bytes": self.bytes,
            "capture_s": round(self.capture_s, 2),
        }


def tour_times(
    video: list[tuple[float, str]], timeline: list[float], density: Sequence[float] = ()
) -> list[tuple[float, str | None, bool, bool]]:
    """The pass's steps in time order: (t, the video's kind of frame at t or None, whether
    the timeline samples at t, whether density takes a frame at t). All lists sit on the
    60 Hz animation grid (frame_times, density_frame_times), so a time two want is the same
    number and is stepped once."""
    at: dict[float, list] = {}
    for t, kind in video:
        at.setdefault(round(t, 6), [t, None, False, False])[1] = kind
    for t in timeline:
        at.setdefault(round(t, 6), [t, None, False, False])[2] = True
    for t in density:
        at.setdefault(round(t, 6), [t, None, False, False])[3] = True
    return [(v[0], v[1], v[2], v[3]) for _, v in sorted(at.items())]


async def tour_pass(
    ctx,
    *,
    video=None,
    timeline=None,
    density: DensityFrames | None = None,
    stepped_by: str,
    wall_budget_s: float | None = None,
    picture_only: bool = False,
) -> dict:
    """One fake-clock walk; returns {"recording": the video's figures or None, "timeline":
    the timeline's evidence data or None, "density_frames": DensityFrames.finish()'s
    figures or None, "stopped": None or {at_s, reason, message}}.
    `video` is the recording's frame taker (probes/recording.py: times(), take(), partial(),
    finish(stopped), close()); `timeline` the timeline's Settings. A ProbeError raised here
    carries its partial data keyed the same way ({"recording": ..., "timeline": ...}, only
    the parts this pass took).

    Wall-clock budget: past `wall_budget_s` (or the run's budget; a slow page's
    advance that the run's budget stops, DemoSlow, too) the pass stops stepping. The video
    is finished with what was captured; the timeline's part is then its partial data (it
    needs the whole tour) and "stopped" says where and why. `picture_only`: a slow page is
    stepped to each time in coarse clock steps (Stepper.to; the recording's fewer frames)."""
    scene = [_scene_graph.SCENE_GRAPH_JS] if density is not None and density.scene is not None else []
    dp = await ctx.open_page(fake_clock=True, init_scripts=[RAF_60HZ_JS, _city_name.CANVAS_TEXT_JS, *scene])
    # ~2045 steps: each calls the page's clock controller straight, one round trip fewer than
    # Playwright's clock.run_for (DemoPage._clock_run_for: same timers, frames and errors)
    dp.direct_clock = True
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="timeline")
    try:
        st = await Stepper(dp).start()
        sampler = None
        if timeline is not None:
            sampler = TimelineSampler(ctx, dp, st, timeline, pool)
            await sampler.prepare()
        steps = tour_times(
            video.times() if video is not None else [],
            frame_times(timeline.end_s, timeline.sample_fps, include_end=True) if timeline else [],
            await density.prepare(dp) if density is not None else [],
        )
        walk = _Walk(dp, st, video, sampler, density)
        walk.picture_only = picture_only
        task = ctx.progress.task(f"{walk.what}: {steps[-1][0]:g} s" if steps else walk.what, len(steps), unit="frames")
        try:
            await walk.run(steps, wall_budget_s, task)
        except ProbeError as e:
            e.data = walk.partial(e.data)
            raise
        finally:
            task.close()
        return await walk.results(stepped_by)
    finally:
        pool.shutdown(wait=True)
        if video is not None:
            video.close()
        await dp.close()


class _Walk:
    """The steps of one tour pass and what each part takes at them: the video's frames, the
    timeline's samples, density's frames."""

    def __init__(self, dp, st: Stepper, video, sampler: TimelineSampler | None, density: DensityFrames | None):
        self.dp, self.st = dp, st
        self.video, self.sampler, self.density = video, sampler, density
        self.stopped: dict | None = None
        self.step_s = 0.0  # wall seconds the clock steps took
        self.picture_only = False  # coarse clock steps on a slow page (Stepper.to)
        parts = (("recording", video), ("timeline", sampler), ("density frames", density))
        self.what = " + ".join(n for n, part in parts if part is not None)

    async def run(self, steps: list[tuple[float, str | None, bool, bool]], wall_budget_s: float | None, task) -> None:
        """Step to each time and take what each part wants there, until the last step or the
        pass's wall-clock budget (`stopped` then says where and why)."""
        started = time.monotonic()
        budget = PassBudget(wall_budget_s, getattr(self.dp, "budget", None))
        st, end_s = self.st, steps[-1][0] if steps else 0.0
        for i, (t, kind, sample, dens) in enumerate(steps):
            if budget.spent():
                self.stopped = _stopped(st, t, end_s, budget.why(), budget, i)
                break
            c0 = time.perf_counter()
            try:
                await st.to(t, picture_only=self.picture_only)
            except DemoSlow as e:  # the run's budget ends this advance: keep what was taken
                self.stopped = _stopped(st, t, end_s, str(e), budget, i)
                break
            self.step_s += time.perf_counter() - c0
            shot = await self.video.take(kind, t, st, full=sample) if kind is not None else None
            if sample and self.sampler is not None:
                await self.sampler.sample(st.frame_s, shot)  # = t, except for t = 0, which load already passed
            if dens and self.density is not None:
                await self.density.take(self.dp, t)
            if i % 10 == 0 or i == len(steps) - 1:
                task.update(i + 1, note=eta_note(i + 1, len(steps), time.monotonic() - started))
        if self.video is not None:
            await self.video.drain()
        if self.sampler is not None:
            await self.sampler.drain()

    def partial(self, data: dict | None) -> dict:
        """A ProbeError's data keyed by part, with what each part took before it."""
        parts = {}
        if self.video is not None:
            parts["recording"] = {**(data or {}), **self.video.partial()}
        if self.sampler is not None:
            parts["timeline"] = {**(data or {}), **self.sampler.partial()}
        return parts

    async def results(self, stepped_by: str) -> dict:
        """tour_pass's answer once the steps are done (or stopped)."""
        out: dict = {
            "recording": None,
            "timeline": None,
            "stopped": self.stopped,
            "density_frames": self.density.finish(self.dp) if self.density is not None else None,
        }
        if self.video is not None:
            out["recording"] = await self.video.finish(self.stopped)
        if self.sampler is not None:
            if self.stopped is not None:
                out["timeline"] = {**self.sampler.partial(), "stopped": self.stopped}
            else:
                out["timeline"] = self.sampler.result(stepped_by)
                out["timeline"]["spent_s"]["step"] = round(self.step_s, 2)
        return out
