"""Dynamic density (items density.count, density.categories, evidence for density.behavior).

Capture only; the image analysis is skycity_bench/vision (pure), the judgement is
scorers/density.py. Under the fake clock, at every sample time (the rubric's 20/25/30/35 s
and every `step_s` across the dense window 20–35 s) we take frame A at t, ask the hook
which objects it claims are visible at t, advance the clock by Δ = `delta_frames` frames
and take frame B. Because the clock only moves when we say so, nothing depends on how fast
this machine renders. Where the count drops between two neighbouring samples, a second,
fresh page replays the demo and samples that interval more densely (the rubric: 发现采样点
之间数量下降时，应补充采样并更新最低值); every sample is kept, the scorer takes the lowest.

The fake clock does not drive CSS animations/transitions: objects animated only by CSS
are not moved between A and B and are not seen as moving (said in the evidence).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import fields
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ProbeError
from ..evidence.density import DensityEvidence
from ..vision import Params, analyse_pair
from ..vision.camera import CameraParams
from ..vision.draw import draw_evidence
from ..vision.objects import ObjectParams
from ..vision.segment import SegmentParams
from ..vision.verify import VerifyParams
from . import probe

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
    # without a hook: which counted regions are plainly objects (vision/objects.py)
    field_min_members: int = Field(ge=2)
    field_share: float = Field(ge=0, le=1)
    field_colour_tol: int = Field(ge=0, le=255)
    fragment_gap_px: int = Field(ge=0, le=200)

    def params(self) -> Params:
        """The vision layer's parameter sets, each field taken from the setting of its name."""
        def pick(cls):
            return cls(**{f.name: getattr(self, f.name) for f in fields(cls) if f.name in type(self).model_fields})
        return Params(camera=pick(CameraParams), segment=pick(SegmentParams), verify=pick(VerifyParams),
                      objects=pick(ObjectParams))


def sample_times(main: list[float], a: float, b: float, step: float) -> list[float]:
    """The rubric's sample points plus every `step` seconds across [a, b], sorted, unique."""
    ts = {round(float(t), 3) for t in main}
    n = int(round((b - a) / step))
    ts |= {round(a + i * step, 3) for i in range(n + 1) if a + i * step <= b + 1e-9}
    return sorted(ts)


def count_of(s: dict) -> int | None:
    """The sample's count: verified when the hook answered, else the visual count."""
    return s.get("verified_count") if s.get("verified_count") is not None else s.get("visual_count")


class _Capture:
    def __init__(self, ctx, delta_ms: float):
        self.ctx = ctx
        self.delta_ms = delta_ms
        self.delta_frames = ctx.settings.delta_frames
        self.other_frames = sorted({k for k in ctx.settings.other_pair_frames if k not in (0, self.delta_frames)})
        self.params = ctx.settings.params()
        self.main = {round(float(t), 3) for t in ctx.scenario.density_sample_times_s}
        self.lowest = None          # (count, t, frame A, data, regions) of the lowest sample so far
        self.recent: dict = {}      # (page, 60 Hz frame) -> frame, the last few taken

    async def sample(self, dp, t: float, hook: bool, densified: bool = False) -> dict:
        c0 = time.perf_counter()
        others: list[tuple[int, object]] = []
        # the way to the first frame needs only the picture at its end (a slow page may get
        # there in coarse steps: browser/session.py), the frames of the pairs every frame
        first = t + min([0] + [k for k in self.other_frames if k < 0] if hook else [0]) * _FRAME_MS / 1000.0
        await _seek_picture(dp, first)
        if hook:
            # frames before t for the other pairs (vision/verify.py: recheck_claims); one the
            # clock has already passed (densified samples close together) is left out
            now = await dp.now_s()
            for k in sorted(k for k in self.other_frames if k < 0):
                tk = t + k * _FRAME_MS / 1000.0
                if tk >= now - 1e-6:
                    await dp.seek(tk)
                    others.append((k, await self._frame(dp, tk)))
                elif (id(dp), self._key(tk)) in self.recent:
                    # densified samples close together: the frame was taken for the one before
                    others.append((k, self.recent[(id(dp), self._key(tk))]))
        await dp.seek(t)
        t_a = await dp.now_s()
        c1 = time.perf_counter()
        a = await self._frame(dp, t)
        claims, hook_error = None, None
        if hook:
            hc = await dp.hook.call("getDynamicObjects")
            if hc.ok and isinstance(hc.value, list):
                claims = [c for c in hc.value if not (isinstance(c, dict) and c.get("visible") is False)]
            else:
                hook_error = hc.error or f"getDynamicObjects returned {type(hc.value).__name__}, not a list"
        await dp.run_for(self.delta_ms)
        t_b = await dp.now_s()
        b = await self._frame(dp, t + self.delta_frames * _FRAME_MS / 1000.0)
        if claims is not None:
            for k in sorted(k for k in self.other_frames if k > self.delta_frames):
                await dp.seek(t + k * _FRAME_MS / 1000.0)
                others.append((k, await self._frame(dp, t + k * _FRAME_MS / 1000.0)))
        c2 = time.perf_counter()
        if a.shape != b.shape:
            raise ProbeError(f"frame size changed between t and t + Δ at {t:g} s: {a.shape} vs {b.shape}")
        res = await asyncio.to_thread(analyse_pair, a, b, claims, self.params,
                                      others if claims is not None else None, self.delta_frames)
        data = {"t": round(t_a, 3), "t_b": round(t_b, 3), "densified": densified, **res.data}
        data["timing_ms"].update(seek=round((c1 - c0) * 1000), capture=round((c2 - c1) * 1000))
        if hook_error:
            data["hook_error"] = hook_error[:200]
        if round(t, 3) in self.main:
            data["evidence"] = self._draw(a, data, res.seg.regions)
        c = count_of(data)
        if c is not None and (self.lowest is None or c < self.lowest[0]):
            self.lowest = (c, t_a, a, data, res.seg.regions)
        return data

    @staticmethod
    def _key(t: float) -> int:
        return int(round(t * 60))             # the 60 Hz frame the clock stands on

    async def _frame(self, dp, t: float):
        """A frame, kept a while: a densified sample whose earlier frames the clock has
        passed takes them from here (the same page, the same frame time: the same picture)."""
        img = await dp.frame()
        self.recent[(id(dp), self._key(t))] = img
        while len(self.recent) > 12:
            self.recent.pop(next(iter(self.recent)))
        return img

    def _draw(self, a, data: dict, regions: list) -> str:
        path, rel = self.ctx.file(f"density/t{data['t']:06.2f}.png")
        claimed = data.get("claimed_count")
        title = (f"t = {data['t']:.2f} s   visual count {data['visual_count']}" +
                 (f"   verified {data['verified_count']} of {claimed} claimed" if claimed is not None else "   no hook"))
        draw_evidence(path, a, data, title, regions)
        return rel


@probe("density", order=50, settings=Settings, evidence=DensityEvidence,
       description="fake clock; frame pairs t, t+Δ across 20–35 s; camera-compensated motion; hook claims checked",
       budget=lambda sc: 2 * (sc.timeouts.load_s + 6 * sc.dense_window_s[1]) + sc.timeouts.probe_grace_s + 120)
async def collect(ctx) -> DensityEvidence:
    s: Settings = ctx.settings
    a_s, b_s = ctx.scenario.dense_window_s
    times = sample_times(ctx.scenario.density_sample_times_s, a_s, b_s, s.step_s)
    cap = _Capture(ctx, s.delta_frames * _FRAME_MS)
    samples: list[dict] = []
    task = ctx.progress.task("density: frame pairs 20–35 s", len(times))
    dp = await ctx.open_page(fake_clock=True)
    try:
        desc = await dp.hook.describe()
        hook = desc.ok
        for i, t in enumerate(times):
            samples.append(await cap.sample(dp, t, hook))
            task.update(i + 1, note=f"t = {t:g} s")
    except ProbeError as e:
        e.data = {"samples": samples, **(e.data or {})}
        raise
    finally:
        task.close()
        await dp.close()
    densify_error = None
    extra = _densify_times(samples, s)
    if extra:
        dp = await ctx.open_page(fake_clock=True)
        try:
            for t in extra:
                samples.append(await cap.sample(dp, t, hook, densified=True))
        except ProbeError as e:
            densify_error = str(e)
        finally:
            await dp.close()
    samples.sort(key=lambda d: d["t"])
    lowest_file = None
    if cap.lowest is not None and "evidence" not in cap.lowest[3]:
        lowest_file = cap.lowest[3]["evidence"] = cap._draw(*cap.lowest[2:5])
    # The figures as the evidence model (evidence/density.py): a figure the model does not
    # know is an error here, not a silent change of the report's shape.
    return DensityEvidence.model_validate({
        "hook": {"present": hook, "describe": desc.value if desc.ok else None, "error": desc.error},
        "delta_ms": round(s.delta_frames * _FRAME_MS, 3),
        "delta_frames": s.delta_frames,
        "other_pair_frames": cap.other_frames,
        "times": times,
        "densified_times": extra,
        "densify_error": densify_error,
        "lowest_evidence": lowest_file,
        "samples": samples,
        "page_errors": dp.events.page_errors[:20],
        "note": "the fake clock does not drive CSS animations/transitions: objects moved only by CSS are not seen moving",
    })


async def _seek_picture(dp, t: float) -> None:
    """Seek to t needing only the picture there; where the session can step a slow page
    coarsely on such a way (issue 16, browser/session.py), let it."""
    if "picture_only" in inspect.signature(dp.seek).parameters:
        await dp.seek(t, picture_only=True)
    else:
        await dp.seek(t)


def _densify_times(samples: list[dict], s: Settings) -> list[float]:
    out: list[float] = []
    drops = []
    for prev, nxt in zip(samples, samples[1:]):
        cp, cn = count_of(prev), count_of(nxt)
        if cp is not None and cn is not None and cn < cp:
            drops.append((cp - cn, prev["t"], nxt["t"]))
    for _, ta, tb in sorted(drops, reverse=True)[: s.densify_max_intervals]:
        for k in range(1, s.densify_points + 1):
            out.append(round(ta + (tb - ta) * k / (s.densify_points + 1), 3))
    return sorted(out)
