"""Dynamic density (items density.count, density.categories, evidence for density.behavior).

Capture only; the image analysis is skycity_bench/analysis/vision (pure), the judgement is
scorers/density.py. Under the fake clock, at every sample time (the rubric's 20/25/30/35 s
and every `step_s` across the dense window 20–35 s) we take frame A at t, ask the hook
which objects it claims are visible at t, advance the clock by Δ = `delta_frames` frames
and take frame B. Because the clock only moves when we say so, nothing depends on how fast
this machine renders. Where the count drops between two neighbouring samples, that
interval is sampled more densely (the rubric: 发现采样点之间数量下降时，应补充采样并更新最低值);
every sample is kept, the scorer takes the lowest.

Capture once: in a run with the recording, its tour pass has already stepped the
demo through the window on the 60 Hz animation grid and captured every frame a sample or a
densified sample can need, with the hook's claims (probes/_tour.py DensityFrames); this
probe reads those (TourFrames) instead of playing the window again. Without them (the
recording not run, or stopped before the window's end) it plays the window itself on a
fresh page (Replay; a second fresh page for the densified samples), stepping the same grid.
One plan of which frames each sample uses (plan_pass) and one analysis (_Capture.run_pass)
for both sources, so both give the same samples.

On a page that renders slowly (a few frames a second) a replay fits its instants and its
densified samples to the probe's time, the rubric's instants first, says which in the
evidence (`sampling`), and reports its progress against the paced estimate of the rest
(probes/_density_time.py).

The fake clock does not drive CSS animations/transitions: objects animated only by CSS
are not moved between A and B and are not seen as moving (said in the evidence).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Annotated

import cv2
from pydantic import BaseModel, ConfigDict, Field, model_validator

from skycity_bench.analysis.vision import Params, analyse_pair
from skycity_bench.analysis.vision.camera_estimate import CameraParams
from skycity_bench.analysis.vision.draw import draw_evidence
from skycity_bench.analysis.vision.multiview import TrackParams
from skycity_bench.analysis.vision.objects import ObjectParams
from skycity_bench.analysis.vision.segment import SegmentParams
from skycity_bench.analysis.vision.verify import VerifyParams
from skycity_bench.browser.session import DemoPage
from skycity_bench.common.errors import Cause, ProbeError
from skycity_bench.evidence.density import DensityEvidence
from skycity_bench.probes import _scene_graph, probe
from skycity_bench.probes._density_time import TimeFit, Walk, keys_of
from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper, frame_time

_FRAME_MS = 1000.0 / 60.0


class Settings(BaseModel):
    """What steers collection and the vision layer's analysis (vision/*Params take the
    fields of their names). Every value is the scenario's (`probes: density:`, the reasons
    there): none has a default in code. What the evidence is judged with is the scorer's
    (`scorers: density:`, scorers/density.py)."""

    model_config = ConfigDict(extra="forbid")

    delta_frames: int = Field(ge=1, le=60)
    # more frames around t (in frames, negative = before t) for claims the pair t, t + Δ
    # did not see move
    other_pair_frames: list[Annotated[int, Field(ge=-60, le=60)]] = Field(max_length=8)
    step_s: float = Field(gt=0, le=15)
    densify_points: int = Field(ge=0, le=20)
    densify_max_intervals: int = Field(ge=0, le=30)
    # camera
    work_width: int = Field(ge=160, le=4096)
    max_features: int = Field(ge=50, le=10000)
    ransac_px: float = Field(gt=0, le=20)
    mesh_cols: int = Field(ge=1, le=64)
    mesh_rows: int = Field(ge=1, le=64)
    mesh_gate_px: float = Field(ge=0)
    parallax_px: float = Field(ge=0)
    dense_width: int = Field(ge=80, le=4096)
    dense_cell: int = Field(ge=1, le=32)
    dense_median: int = Field(ge=3, le=99)
    parallax_max_px: float = Field(ge=0, le=50)
    dense_epipolar_px: float = Field(ge=0, le=50)
    # segmentation and exclusions
    edge_tolerance_px: int = Field(ge=0, le=8)
    diff_threshold: int = Field(ge=1, le=255)
    group_px: int = Field(ge=0, le=20)
    min_area_px: int = Field(ge=1)
    min_extent_px: int = Field(ge=1)
    min_thickness_px: int = Field(ge=1, le=15)
    streak_aspect: float = Field(ge=1)
    long_streak_px: int = Field(ge=4)
    long_thickness_px: int = Field(ge=1, le=30)
    parallax_sliver_aspect: float = Field(ge=1)
    parallax_extra_px: int = Field(ge=0, le=8)
    soft_min_area_px: int = Field(ge=1)
    soft_strong_ratio: float = Field(ge=0, le=1)
    max_region_frac: float = Field(gt=0, le=1)
    full_screen_frac: float = Field(gt=0, le=1)
    screen_static_max: int = Field(ge=0, le=255)
    # hook claims
    claim_margin_px: float = Field(ge=0)
    claim_margin_frac: float = Field(ge=0)
    min_support_px: int = Field(ge=1)
    part_overlap: float = Field(gt=0, le=1)
    max_displacement_px: int = Field(ge=1, le=400)
    own_share: float = Field(gt=0, le=1)
    share_fit: float = Field(ge=0, le=1)
    still_rms: float = Field(ge=0)
    min_shift_px: float = Field(ge=0)
    shift_fit: float = Field(ge=0, le=1)
    distinct_motion_px: float = Field(ge=0)
    min_texture: float = Field(ge=0)
    speed_fit: float = Field(ge=0, le=1)
    borrow_overlap: float = Field(ge=0, le=1)
    epipolar_px: float = Field(ge=0, le=50)
    mirror_px: float = Field(ge=0, le=50)
    mirror_frac: float = Field(ge=0, le=5)
    other_shift_per_delta_px: float = Field(ge=0, le=20)
    twin_min: float = Field(ge=0, le=10)
    # the floors of what a viewer counts as a moving object: size (a claim's long side, px)
    # and own speed on screen over the longer pairs (px/s)
    min_object_px: float = Field(ge=0, le=64)
    min_speed_px_s: float = Field(ge=0, le=200)
    # the far pair (3D): frames t ± far_pair_frames (they must be among other_pair_frames)
    far_pair_frames: int = Field(ge=0, le=60)
    far_epipolar_px: float = Field(ge=0, le=50)
    far_search_px: int = Field(ge=1, le=400)
    # the still-point test over views (3D): frames and the hook's claims at t + each of
    # still_point_frames (as many before t as after; [] = off); vision/multiview.py
    still_point_frames: list[Annotated[int, Field(ge=-300, le=300)]] = Field(max_length=8)
    still_search_px: int = Field(ge=2, le=64)
    still_min_ncc: float = Field(ge=-1, le=1)
    still_min_margin: float = Field(ge=0, le=2)
    still_moved_px: float = Field(gt=0, le=200)
    still_inner: float = Field(ge=0, lt=0.5)
    still_min_corners: int = Field(ge=8, le=1500)
    # without a hook: the three.js scene graph locates claims (probes/_scene_graph.py)
    scene_graph: bool
    scene_recent_ms: int = Field(ge=17, le=5000)
    scene_frame_ms: int = Field(ge=17, le=1000)
    scene_world_share: float = Field(gt=0, le=1)
    # without a hook: which counted regions are plainly objects (vision/objects.py)
    field_min_members: int = Field(ge=2)
    field_share: float = Field(ge=0, le=1)
    field_colour_tol: int = Field(ge=0, le=255)
    fragment_gap_px: int = Field(ge=0, le=200)

    @model_validator(mode="after")
    def _far_frames_taken(self) -> Settings:
        k = self.far_pair_frames
        if k and not {-k, k} <= set(self.other_pair_frames):
            raise ValueError(f"far_pair_frames {k}: other_pair_frames must hold {-k} and {k} (the frames taken)")
        v = self.still_point_frames
        if len(set(v)) != len(v) or 0 in v or sum(k < 0 for k in v) != sum(k > 0 for k in v):
            raise ValueError(
                f"still_point_frames {v}: distinct, none 0, as many before t as after (t is the centre view)"
            )
        return self

    def params(self) -> Params:
        """The vision layer's parameter sets, each field taken from the setting of its name."""

        def pick(cls):
            return cls(**{f.name: getattr(self, f.name) for f in fields(cls) if f.name in type(self).model_fields})

        track = pick(TrackParams)
        track.still_point_frames = tuple(sorted(track.still_point_frames))
        return Params(
            camera=pick(CameraParams),
            segment=pick(SegmentParams),
            verify=pick(VerifyParams),
            objects=pick(ObjectParams),
            track=track,
        )


def sample_times(main: list[float], a: float, b: float, step: float) -> list[float]:
    """The rubric's sample points plus every `step` seconds across [a, b], sorted, unique."""
    ts = {round(float(t), 3) for t in main}
    n = int(round((b - a) / step))
    ts |= {round(a + i * step, 3) for i in range(n + 1) if a + i * step <= b + 1e-9}
    return sorted(ts)


def count_of(s: dict) -> int | None:
    """The sample's count: verified when the hook answered, else the visual count."""
    return s.get("verified_count") if s.get("verified_count") is not None else s.get("visual_count")


def plan_pass(
    times: list[float], delta_frames: int, other_frames: list[int], hook: bool, view_frames: Sequence[int] = ()
) -> list[dict]:
    """Which frames each sample of one pass uses, as 60 Hz frame numbers: {t, key (frame A),
    before (offsets < 0), after (offsets > Δ; used only when the hook answers at t), views
    (the still-point test's views, `view_frames`: among before and after, and the hook's
    claims are asked there too; with a hook only)}.

    Every sample gets every frame it asks for: a pass takes the frames of all its samples in
    time order (_Capture.run_pass walks their sorted union forward), so a frame before t is
    never passed by the walk, however far a sample's frames after it reach (the far pair,
    t ± 60 frames, reaches past the next sample's frames before it at a 1 s step). The tour
    captures every offset at every time a sample can fall on (probes/_tour.py
    density_frame_times), so both sources give the same frames. (Before the far pair a
    replay's rule left out an earlier frame the walk had passed: a densified sample's frame
    6 before it, now taken.)"""
    views = sorted({k for k in view_frames if k != 0}) if hook else []
    others = sorted({k for k in (*other_frames, *views) if k not in (0, delta_frames)})
    before = [k for k in others if k < 0] if hook else []
    after = [k for k in others if k > delta_frames] if hook else []
    return [
        {"t": t, "key": int(round(t * 60)), "before": list(before), "after": list(after), "views": list(views)}
        for t in times
    ]


class _Call:
    """A hook call's answer as stored (ok, value, error), from the page or the tour's index."""

    def __init__(self, ok: bool, value, error):
        self.ok, self.value, self.error = ok, value, error


class Replay:
    """Frames by playing the window on a fresh page (the probe run without the recording's
    tour, or beyond what the tour captured): forward on the 60 Hz animation grid as the
    tour steps (probes/_stepper.py), so a frame is the same picture from either source."""

    name = "replay"

    def __init__(self, ctx):
        self.ctx = ctx
        self._dp: DemoPage | None = None
        self._st: Stepper | None = None
        self.kind = None  # what locates the claims (locate)

    async def open(self) -> None:
        scene = [_scene_graph.SCENE_GRAPH_JS] if self.ctx.settings.scene_graph else []
        self._dp = await self.ctx.open_page(fake_clock=True, init_scripts=[RAF_60HZ_JS, *scene])
        self._st = await Stepper(self._dp).start()

    @property
    def dp(self) -> DemoPage:
        """The replay's page (open first)."""
        if self._dp is None:
            raise RuntimeError("the replay is not open (Replay.open)")
        return self._dp

    @property
    def st(self) -> Stepper:
        """The replay page's stepper (open first)."""
        if self._st is None:
            raise RuntimeError("the replay is not open (Replay.open)")
        return self._st

    async def measured(self) -> None:
        """When no page of the run has measured the frame cost yet, the page's first frames
        after load played one at a time and timed now (browser/page_clock.py: any first advance
        does so; the same frames the walk would play first), so that the probe's time can be
        planned from it."""
        b = getattr(self.ctx.browser, "budget", None)
        if b is None or b.frame_cost_ms() is not None:
            return
        n = self.ctx.scenario.timeouts.frame_cost_frames
        # n frames of 17 ms (the measurement's step), ending on a whole ms (Stepper.to)
        await self.st.to((self.st.pos_ms + n * (int(_FRAME_MS) + 1) - 0.5) / 1000.0)

    async def describe(self) -> _Call:
        d = await self.dp.hook.describe()
        return _Call(d.ok, d.value, d.error)

    async def locate(self, desc: _Call) -> dict:
        """What locates the claims: the hook when describe() answered, else the three.js
        scene graph when the page renders one (and the scenario allows it), else nothing."""
        loc = await _scene_graph.choose(self.dp, desc.ok, self.ctx.settings.scene_graph)
        self.kind = loc["kind"]
        return loc

    async def frame(self, key: int):
        """(frame, page clock s, ms stepping, ms capturing) at 60 Hz frame `key`. The way to
        the first frame needs only the picture at its end (a slow page may get there in
        coarse steps: browser/session.py); from one frame before it every frame is run."""
        c0 = time.perf_counter()
        t = key / 60.0
        if self.st.now_s < t - 1.5 / 60.0:
            await self.st.to(t - 1.0 / 60.0, picture_only=True)
        await self.st.to(t)
        c1 = time.perf_counter()
        img = await self.dp.frame()
        now = await self.dp.now_s()
        return img, now, (c1 - c0) * 1000, (time.perf_counter() - c1) * 1000

    async def claims(self, key: int) -> _Call:
        if self.kind == _scene_graph.KIND:
            return _Call(*await _scene_graph.claims(self.dp, self.ctx.settings))
        hc = await self.dp.hook.call("getDynamicObjects")
        return _Call(hc.ok, hc.value, hc.error)

    def page_errors(self) -> list:
        return self._dp.events.page_errors[:20] if self._dp is not None else []

    async def close(self) -> None:
        if self._dp is not None:
            await self._dp.close()


class TourFrames:
    """Frames the recording's tour pass captured for this probe (probes/_tour.py
    DensityFrames; named in the recording's evidence as density_frames): the same PNGs, the
    page's clock at each and the hook's answers, read from recordings/density_frames/."""

    name = "tour"

    def __init__(self, folder: Path, index: dict):
        self.folder, self.index = folder, index

    @classmethod
    def of_run(cls, ctx) -> TourFrames | None:
        rec = ctx.artifacts.get("recording")
        df = (rec.data or {}).get("density_frames") if rec is not None and rec.status == "ok" else None
        if not df:
            return None
        path = ctx.out_dir / df["index"]
        try:
            index = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cls(path.parent, index)

    def has(self, keys: list[int]) -> bool:
        return all(str(k) in self.index["frames"] for k in keys)

    async def open(self) -> None:
        pass

    async def describe(self) -> _Call:
        h = self.index["hook"]
        return _Call(h["ok"], h["value"], h["error"])

    async def locate(self, desc: _Call) -> dict:
        # an index written before the scene graph located by the hook alone
        return self.index.get("locator") or _scene_graph.locator("hook" if desc.ok else None)

    async def frame(self, key: int):
        c0 = time.perf_counter()
        f = self.index["frames"][str(key)]
        img = await asyncio.to_thread(cv2.imread, str(self.folder / f["file"]), cv2.IMREAD_COLOR)
        if img is None:
            raise ProbeError(f"the tour's density frame {f['file']} could not be read")
        return img, f["now_s"], 0.0, (time.perf_counter() - c0) * 1000

    async def claims(self, key: int) -> _Call:
        c = self.index["claims"].get(str(key))
        if c is None:
            return _Call(False, None, f"the tour asked no claims at frame {key}")
        return _Call(c["ok"], c["value"], c["error"])

    def page_errors(self) -> list:
        return list(self.index.get("page_errors") or [])[:20]

    async def close(self) -> None:
        pass

    def remove(self) -> None:
        """The PNGs are this probe's only; the index stays (the recording's evidence names it)."""
        for f in self.index["frames"].values():
            (self.folder / f["file"]).unlink(missing_ok=True)


class _Capture:
    """The one analysis of a pass's samples, whichever source gives the frames."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.delta_frames = ctx.settings.delta_frames
        self.other_frames = sorted({k for k in ctx.settings.other_pair_frames if k not in (0, self.delta_frames)})
        self.view_frames = sorted(ctx.settings.still_point_frames)
        self.params = ctx.settings.params()
        self.main = {round(float(t), 3) for t in ctx.scenario.density_sample_times_s}
        self.lowest = None  # (count, t, frame A, data, regions) of the lowest sample so far
        # claims from a locator that can miss objects (the three.js scene graph): the pixels'
        # plain-object figures are kept beside the verified claims (vision/analyse.py: plain)
        self.plain_too = False

    async def run_pass(
        self,
        source,
        times: list[float],
        hook: bool,
        densified: bool,
        out: list[dict],
        progress=None,
        fit: TimeFit | None = None,
        reserve_s: float = 0.0,
    ) -> list[float]:
        """Every sample of one pass, appended to `out` in time order as it is analysed; returns
        the times taken. The source is walked forward once, each sample's frames taken up to
        its last one (the frames of later samples on the way too); a frame is dropped when no
        sample still to take uses it. With `fit` (a slow page), after every sample the samples
        still to take are fitted to what is left of the probe's time less `reserve_s`
        (probes/_density_time.py). `progress(t, pending, pos)` after every sample."""
        pending = self.plan(times, hook)
        frames: dict[int, tuple] = {}
        claims: dict[int, _Call] = {}
        pos, taken = -1, []
        while pending:
            p, t0, start = pending[0], time.monotonic(), pos
            # the hook's claims at each sample's frame A and at its still-point views
            a_keys = {q["key"] + k for q in pending for k in (0, *q["views"])}
            end = max(p["key"] + k for k in (self.delta_frames, *p["after"]))
            walked = [k for k in keys_of(pending, self.delta_frames) if pos < k <= end]
            for key in walked:
                frames[key] = await source.frame(key)
                if hook and key in a_keys:
                    claims[key] = await source.claims(key)
                pos = key
            out.append(await self._analyse(p, frames, claims, hook, densified))
            taken.append(p["t"])
            pending = pending[1:]
            if fit is not None:
                fit.count(walked, start, 1, time.monotonic() - t0)
                pending = fit.trim(pending, pos, reserve_s)
            used = set(keys_of(pending, self.delta_frames))
            for k in [k for k in frames if k not in used]:
                del frames[k]
            if progress is not None:
                progress(p["t"], pending, pos)
        return taken

    def plan(self, times: list[float], hook: bool) -> list[dict]:
        return plan_pass(times, self.delta_frames, self.other_frames, hook, self.view_frames)

    async def _analyse(self, p: dict, frames: dict, calls: dict, hook: bool, densified: bool) -> dict:
        n, t = p["key"], p["t"]
        call = calls.get(n)
        a, t_a, seek_a, cap_a = frames[n]
        b, t_b, seek_b, cap_b = frames[n + self.delta_frames]
        claims, hook_error = None, None
        if hook and call is not None:
            if call.ok and isinstance(call.value, list):
                claims = [c for c in call.value if not (isinstance(c, dict) and c.get("visible") is False)]
                if not self.plain_too:  # a hook's claims: what only the scene graph tells is dropped
                    claims = [_hook_said(c) for c in claims]
            else:
                hook_error = call.error or f"getDynamicObjects returned {type(call.value).__name__}, not a list"
        others = [(k, frames[n + k][0]) for k in p["before"] if k in self.other_frames]
        views = None
        if claims is not None:
            others += [(k, frames[n + k][0]) for k in p["after"] if k in self.other_frames]
            # the still-point test's views: the frame and the hook's visible claims there
            views = {k: (frames[n + k][0], _visible(calls.get(n + k))) for k in p["views"]}
        if a.shape != b.shape:
            raise ProbeError(
                f"frame size changed between t and t + Δ at {t:g} s: {a.shape} vs {b.shape}", cause=Cause.PAGE
            )
        res = await asyncio.to_thread(
            analyse_pair,
            a,
            b,
            claims,
            self.params,
            others if claims is not None else None,
            self.delta_frames,
            views,
            self.plain_too,
        )
        # the frames' times on the 60 Hz grid, not the clock reads: a read lands up to 1 ms past
        # the frame, by where the page's clock started (frame_time), and the same frames from
        # the tour and from the probe's own replay must give the same sample
        data = {"t": round(frame_time(t_a), 3), "t_b": round(frame_time(t_b), 3), "densified": densified, **res.data}
        own = [frames[n + k] for k in {0, self.delta_frames, *p["before"], *(p["after"] if claims is not None else [])}]
        data["timing_ms"].update(seek=round(sum(f[2] for f in own)), capture=round(sum(f[3] for f in own)))
        if hook_error:
            data["hook_error"] = hook_error[:200]
        if round(t, 3) in self.main:
            data["evidence"] = self._draw(a, data, res.seg.regions)
        c = count_of(data)
        if c is not None and (self.lowest is None or c < self.lowest[0]):
            self.lowest = (c, t_a, a, data, res.seg.regions)
        return data

    def lowest_drawn(self) -> str | None:
        """The lowest sample's evidence picture, drawn now unless it was a main instant's
        (drawn already, named in the sample); None when no sample was counted."""
        if self.lowest is None or "evidence" in self.lowest[3]:
            return None
        self.lowest[3]["evidence"] = self._draw(*self.lowest[2:5])
        return self.lowest[3]["evidence"]

    def _draw(self, a, data: dict, regions: list) -> str:
        path, rel = self.ctx.file(f"density/t{data['t']:06.2f}.png")
        claimed = data.get("claimed_count")
        title = f"t = {data['t']:.2f} s   visual count {data['visual_count']}" + (
            f"   verified {data['verified_count']} of {claimed} claimed" if claimed is not None else "   no hook"
        )
        draw_evidence(path, a, data, title, regions)
        return rel


def own_budget_s(sc) -> float:
    """The probe's own budget: two pages (the window and the densified samples) each loaded
    and played to the window's end at up to six times real time, and two minutes of analysis."""
    return 2 * (sc.timeouts.load_s + 6 * sc.dense_window_s[1]) + sc.timeouts.probe_grace_s + 120


@probe(
    "density",
    order=50,
    settings=Settings,
    evidence=DensityEvidence,
    after=("recording",),
    description="fake clock; frame pairs t, t+Δ across 20–35 s (the recording's tour frames when it runs); "
    "camera-compensated motion; hook claims checked",
    budget=lambda sc: own_budget_s(sc),
)
async def collect(ctx) -> DensityEvidence:
    """Frames from the recording's tour pass when it ran before this probe and captured the
    whole window (capture once: it declares that it reads the recording's
    evidence, ProbeSpec.after); else from a replay of the window on a fresh page. One
    analysis either way (_Capture.run_pass); the evidence says which source (frames_from)."""
    s: Settings = ctx.settings
    a_s, b_s = ctx.scenario.dense_window_s
    times = sample_times(ctx.scenario.density_sample_times_s, a_s, b_s, s.step_s)
    cap = _Capture(ctx)
    started = time.monotonic()
    found = TourFrames.of_run(ctx)
    try:
        return await _collect(ctx, s, times, cap, found, started)
    finally:
        if found is not None:  # read or not, the PNGs were this probe's only
            found.remove()


def _time_fit(ctx, cap: _Capture, started: float) -> TimeFit | None:
    """On a page that renders slowly (a measured frame cost above the coarse-step limit), the
    probe's time (probes/_density_time.py): the earlier of the end of its share of the run's
    budget (browser/clock_budget.py RunBudget) and its own budget. None on a fast page, or
    without a run budget: every instant is taken."""
    b = getattr(ctx.browser, "budget", None)
    cost = b.frame_cost_ms() if b is not None else None
    t = ctx.scenario.timeouts
    if b is None or cost is None or cost <= t.coarse_above_ms:
        return None
    own = own_budget_s(ctx.scenario)
    share = b.shares.get("density")
    ends = share.ends_at if share is not None else b.deadline
    return TimeFit(
        walk=Walk(cost / 1000.0, t.coarse_step_ms),
        deadline=min(ends, started + own),
        main={round(float(x), 3) for x in ctx.scenario.density_sample_times_s},
        delta_frames=cap.delta_frames,
        share_s=(share.seconds if share is not None else ends - started),
        own_s=own,
        started=started,
    )


async def _collect(
    ctx, s: Settings, times: list[float], cap: _Capture, tour: TourFrames | None, started: float
) -> DensityEvidence:
    hook_tour = tour is not None and (await tour.locate(await tour.describe()))["kind"] != "none"
    if tour is not None and not tour.has(keys_of(cap.plan(times, hook_tour), cap.delta_frames)):
        tour = None  # the tour stopped before the window's end: play it here
    samples: list[dict] = []
    frames_from = {"main": "tour" if tour is not None else "replay", "densified": None}
    source = tour or Replay(ctx)
    planned, view = times, None
    try:
        try:
            desc, loc, fit = await _open(ctx, source, cap, started)
            if fit is not None:  # a slow page: the instants that fit the probe's time
                times = [p["t"] for p in fit.first_cut(cap.plan(times, True))]
            view = _View(ctx, cap, fit, times, samples, tour is not None)
            hook = loc["kind"] != "none"
            taken = await cap.run_pass(
                source, times, hook, False, samples, view.main, fit, fit.reserve_s if fit is not None else 0.0
            )
        except ProbeError as e:
            e.data = {"samples": samples, **(e.data or {})}
            raise
        finally:
            await source.close()
        extra, extra_planned = _densify_plan(cap, samples, s, fit, hook)
        densify_error, frames_from["densified"], more_errors = await _densify(
            ctx, cap, tour, hook, extra, samples, view
        )
    finally:
        if view is not None:
            view.close()
    page_errors = more_errors if more_errors is not None else source.page_errors()
    samples.sort(key=lambda d: d["t"])
    lowest_file = cap.lowest_drawn()
    done_extra = sorted(d["t"] for d in samples if d["densified"])
    sampling = fit.note(planned, taken, extra_planned, done_extra) if fit is not None else None
    # The figures as the evidence model (evidence/density.py): a figure the model does not
    # know is an error here, not a silent change of the report's shape.
    return DensityEvidence.model_validate(
        {
            "hook": {"present": desc.ok, "describe": desc.value if desc.ok else None, "error": desc.error},
            "locator": loc,
            "delta_ms": round(s.delta_frames * _FRAME_MS, 3),
            "delta_frames": s.delta_frames,
            "other_pair_frames": cap.other_frames,
            "still_point_frames": cap.view_frames if hook else None,
            "times": taken,
            # on a slow page those taken (the pass may leave some out as it goes: `sampling`)
            "densified_times": extra if fit is None else done_extra,
            "densify_error": densify_error,
            "lowest_evidence": lowest_file,
            "samples": samples,
            "page_errors": page_errors,
            "frames_from": frames_from,
            **({"sampling": sampling} if sampling is not None else {}),
            "note": "the fake clock does not drive CSS animations/transitions: objects moved only by CSS are not seen moving",
        }
    )


async def _open(ctx, source, cap: _Capture, started: float) -> tuple[_Call, dict, TimeFit | None]:
    """Open the pass's source: (describe()'s answer, what locates the claims: the hook, else
    the three.js scene graph, probes/_scene_graph.py, and the probe's time when it replays
    the window on a slow page). The tour's frames cost no rendering; a replay's frames are
    priced from the page's frame cost, measured here when no page of the run has yet, and the
    open's wall time is kept (a densifying page costs as much again)."""
    opened = time.monotonic()
    await source.open()
    desc = await source.describe()
    loc = await source.locate(desc)
    cap.plain_too = loc["kind"] == _scene_graph.KIND
    fit = None
    if isinstance(source, Replay):
        await source.measured()
        fit = _time_fit(ctx, cap, started)
        if fit is not None:
            fit.open_s = time.monotonic() - opened
    return desc, loc, fit


class _View:
    """The probe's progress line. On a fast page (or from the tour's frames) the share of
    samples taken; on a slow page (`fit`) its time so far against that and the paced estimate
    of the rest (probes/_density_time.py), the densified samples the drops seen so far call
    for included, so the run's estimate follows what is really left."""

    def __init__(self, ctx, cap: _Capture, fit: TimeFit | None, times: list[float], samples: list[dict], tour: bool):
        self.cap, self.fit, self.samples = cap, fit, samples
        said = "density: frame pairs 20–35 s" + (" (the tour's frames)" if tour else "")
        if fit is not None:
            said += f" ({len(times)} instants fit on this slow page)"
        self.task = ctx.progress.task(said, 1000.0 if fit is not None else len(times))
        self.done = 0

    def main(self, t: float, pending: list[dict], pos: int) -> None:
        self.done += 1
        if self.fit is None:
            self.task.update(self.done, note=f"t = {t:g} s")
            return
        rest = self.fit.need_s(pending, pos)
        rest += min(self._densify_s(), max(0.0, self.fit.left_s() - rest))
        note = f"t = {t:g} s · {self.done} of {self.done + len(pending)} instants"
        self.task.update(1000.0 * self.fit.progress(rest), note=note)

    def densified(self, t: float, pending: list[dict], pos: int) -> None:
        if self.fit is not None:
            note = f"densified t = {t:g} s · {len(pending)} left"
            self.task.update(1000.0 * self.fit.progress(self.fit.need_s(pending, pos)), note=note)

    def densifying(self, extra: list[float]) -> None:
        """The densified samples' pass starts: its estimate, a fresh page walked from the start."""
        if self.fit is not None and extra:
            note = f"{len(extra)} densified samples where the count dropped"
            self.task.update(1000.0 * self.fit.progress(self._densify_s(extra)), note=note)

    def _densify_s(self, extra: list[float] | None = None) -> float:
        """What the densified samples cost at the pace so far (the drops seen so far when
        `extra` is None), on a fresh page walked from the start."""
        fit = self.fit
        if extra is None:
            extra = _densify_times(sorted(self.samples, key=lambda d: d["t"]), self.cap.ctx.settings)
        if fit is None or not extra:
            return 0.0
        return fit.pace * (fit.open_s or 0.0) + fit.need_s(self.cap.plan(sorted(extra), True), 0)

    def close(self) -> None:
        self.task.close()


def _densify_plan(
    cap: _Capture, samples: list[dict], s: Settings, fit: TimeFit | None, hook: bool
) -> tuple[list[float], list[float]]:
    """(the densified samples to take, those planned): where the count dropped between two
    samples; on a slow page those that fit in what is left, largest drop first."""
    planned = _densify_times(samples, s)
    if fit is None or not planned:
        return sorted(planned), sorted(planned)
    by_t = {p["t"]: p for p in cap.plan(planned, hook)}
    kept = fit.densify_cut([by_t[t] for t in planned])
    return [p["t"] for p in kept], sorted(planned)


async def _densify(
    ctx, cap: _Capture, tour: TourFrames | None, hook: bool, extra: list[float], samples: list[dict], view: _View
) -> tuple[str | None, str | None, list | None]:
    """The samples at `extra` (where the count dropped between two samples) added to
    `samples`, from the tour's frames when it has them all, else from a replay of the
    window: (the error that stopped them, which source took them, its page errors); all
    None when there are none to take."""
    if not extra:
        return None, None, None
    plan_keys = keys_of(cap.plan(extra, hook), cap.delta_frames)
    more = tour if tour is not None and tour.has(plan_keys) else Replay(ctx)
    fit = view.fit if more is not tour else None
    view.densifying(extra)
    error = None
    try:
        await more.open()
        await more.locate(await more.describe())
        await cap.run_pass(more, extra, hook, True, samples, view.densified, fit)
    except ProbeError as e:
        error = str(e)
    finally:
        await more.close()
    return error, more.name, more.page_errors()


# What the three.js scene graph locator adds to a claim (browser/js/scene_graph.js): whether
# rays found it covered, whether it is fixed to the camera. vision/settle.py takes them as the
# scene's own account; a hook saying the same is the demo's word, and is not taken.
SCENE_ONLY = ("rays", "fixed_to_camera")


def _hook_said(c):
    """A hook's claim without what only the scene graph locator may say of it."""
    return {k: v for k, v in c.items() if k not in SCENE_ONLY} if isinstance(c, dict) else c


def _visible(call: _Call | None) -> list | None:
    """The hook's visible claims of one answer, or None where it failed."""
    if call is None or not call.ok or not isinstance(call.value, list):
        return None
    return [c for c in call.value if not (isinstance(c, dict) and c.get("visible") is False)]


def _densify_times(samples: list[dict], s: Settings) -> list[float]:
    """The densified samples' times where the count dropped between two neighbouring samples:
    densify_points in each of the densify_max_intervals largest drops, the largest first."""
    out: list[float] = []
    drops = []
    for prev, nxt in zip(samples, samples[1:]):
        cp, cn = count_of(prev), count_of(nxt)
        if cp is not None and cn is not None and cn < cp:
            drops.append((cp - cn, prev["t"], nxt["t"]))
    for _, ta, tb in sorted(drops, reverse=True)[: s.densify_max_intervals]:
        for k in range(1, s.densify_points + 1):
            out.append(round(ta + (tb - ta) * k / (s.densify_points + 1), 3))
    return out
