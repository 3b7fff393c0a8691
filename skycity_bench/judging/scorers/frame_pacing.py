"""smoothness.frame_pacing, exactly as the rubric's 流畅度 section says: P95 frame interval
and share of intervals over the long-frame threshold, for the full run (0–60 s) and the dense
window (20–35 s); each tier needs both conditions (≤ inclusive); the worse window decides.

Clocks. rAF's timestamp (the frame clock) is the rubric's measure. The sampler
also keeps performance.now() on entry, which shows main-thread stalls the frame clock hides
(a callback held up 42 ms reads 33.3 ms on the frame clock, 43 ms on entry). The entry
clock may lengthen an interval only when that frame was really late: the frame clock
skipped a vsync, or Chromium's own frame reporting (a trace of the pass,
browser/frame_trace.py) says the frame the page was producing in that interval was not
presented at its vsync. A callback that merely starts a few ms late in
a frame that was presented on time is scheduling jitter, not a stall a viewer sees, and
never counts: jitter cannot move a tier by construction. Every clock is in the report
(`raf`, `entry`, the decided figures), with what decided each figure and why.

Chromium's own dropped-frame share is reported beside the tier
(`measurements.smoothness.chromium`, not scored). When the two accounts disagree by design
(a compositor-only animation: the sampler sees no scene updates while Chromium presents an
animation; rAF smooth while Chromium dropped many frames; or the reverse) the item goes to
`review` with both as evidence.

When the scene itself updated in fewer than the scenario's share of frames, or froze longer
than its limit while rAF ran, the item is `review` with null points: the rubric says such a
run is pending review and never gets full marks. The machine's own noise around the pass is
judged by the probe (probes/frame_pacing.py `noise_reasons`, which also re-runs a noisy
pass once); its reasons are reported here beside the tier.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.analysis import statistics as stats
from skycity_bench.common.errors import Cause
from skycity_bench.evidence.frame_pacing import FramePacingEvidence
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings
from skycity_bench.judging.scorers._pacing_side import late_side
from skycity_bench.judging.start_diagnosis import is_flat


@scorer_settings("frame_pacing")
class Settings(BaseModel):
    """The scenario's `scorers.frame_pacing` (reasons beside the values in
    scenarios/skycity.yaml)."""

    model_config = ConfigDict(extra="forbid")

    min_scene_update_ratio: float = Field(ge=0, le=1)
    max_freeze_s: float = Field(gt=0)
    blank_flat_share: float = Field(gt=0.5, le=1, description="the picture is a blank from this share in one colour")
    clock_resolution_ms: float = Field(ge=0, le=5)
    late_frame_vsyncs: float = Field(ge=1.0)
    trace_alignment_min: float = Field(ge=0, le=1)
    trace_match_ms: float = Field(gt=0)
    chromium_review_dropped_pct: float = Field(ge=0, le=100)
    chromium_smooth_dropped_pct: float = Field(ge=0, le=100)
    chromium_min_frames_share: float = Field(ge=0, le=1)
    compositor_animation_min_share: float = Field(ge=0, le=1)
    side_busy_share: float = Field(gt=0, le=2)
    side_lag_vsyncs: float = Field(gt=0)
    side_majority: float = Field(gt=0.5, le=1)


RAF, ENTRY = "rAF timestamp", "performance.now() on entry"
CHROMIUM_LATE, FRAME_CLOCK_LATE = "chromium+frame_clock", "frame_clock"


def interval_stats(
    iv: np.ndarray, end: np.ndarray, a_s: float, b_s: float, long_ms: float, resolution_ms: float = 0.0
) -> dict[str, Any] | None:
    """Intervals whose end frame lies in (a, b] seconds. A long frame is one over `long_ms`
    by more than the clock's resolution (Chromium coarsens performance.now() and rAF
    timestamps to 0.1 ms, so three 60 Hz frames read 49.9–50.1 ms: that is 50 ms, not over)."""
    if iv.size == 0:
        return None
    sel = (end > a_s * 1000) & (end <= b_s * 1000)
    if not sel.any():
        return None
    v = iv[sel]
    return {
        "p95_ms": stats.p95(v),
        "long_frame_ratio": stats.share_over(v, long_ms + resolution_ms),
        "intervals": int(v.size),
        "max_ms": float(v.max()),
        "median_ms": float(np.median(v)),
    }


def window_stats(
    t_ms: np.ndarray, a_s: float, b_s: float, long_ms: float, resolution_ms: float = 0.0
) -> dict[str, Any] | None:
    """interval_stats of one clock's frame times."""
    if t_ms.size < 2:
        return None
    return interval_stats(np.diff(t_ms), t_ms[1:], a_s, b_s, long_ms, resolution_ms)


def scene_updates(raf_ms: np.ndarray, drew: np.ndarray) -> tuple[float | None, float]:
    """(share of frames in which the scene drew, longest stretch without a draw in seconds).

    A freeze is the scene standing still *while rAF ran*: at least one animation frame
    between two draws drew nothing. Two drawn frames one long interval apart are a stall of
    the whole page (rAF did not run either): the pacing figures count it, it is no freeze."""
    if drew.size < 2:
        return None, 0.0
    d = drew[1:]
    ratio = float(d.mean())
    longest, run_start = 0.0, None
    for i, flag in enumerate(drew):
        if flag:
            if run_start is not None and i - run_start >= 2:
                longest = max(longest, (raf_ms[i] - raf_ms[run_start]) / 1000.0)
            run_start = i
    if run_start is None:  # never drew: the whole run
        longest = (raf_ms[-1] - raf_ms[0]) / 1000.0
    elif raf_ms.size - 1 - run_start >= 1:  # frames ran after the last draw
        longest = max(longest, (raf_ms[-1] - raf_ms[run_start]) / 1000.0)
    return ratio, longest


def trace_alignment(raf: np.ndarray, chrom_t: np.ndarray, match_ms: float) -> float | None:
    """Share of rAF timestamps that find a Chromium frame begin within `match_ms`: rAF passes
    its callbacks the begin time of the frame being produced, so on a correctly anchored
    trace (almost) every one does."""
    if raf.size == 0 or chrom_t.size == 0:
        return None
    k = np.clip(np.searchsorted(chrom_t, raf), 1, chrom_t.size - 1) if chrom_t.size > 1 else np.zeros(raf.size, int)
    d = (
        np.minimum(np.abs(chrom_t[k] - raf), np.abs(chrom_t[k - 1] - raf))
        if chrom_t.size > 1
        else np.abs(chrom_t[0] - raf)
    )
    return float(np.mean(d <= match_ms))


def late_intervals(
    raf: np.ndarray, chromium: dict[str, Any], settings: Settings, vsync_ms: float, entry_abs: np.ndarray | None = None
) -> tuple[np.ndarray, str, dict[str, Any]]:
    """Which intervals (frame i-1 -> i) hold a frame that was really late, by which signals.

    The frame clock: the interval skipped a vsync (≥ late_frame_vsyncs vsyncs): no new frame
    of the page's was made for that vsync. Chromium (a usable trace): the page's frame was
    dropped (not presented at its vsync) at a vsync that begins in [raf[i-1], raf[i]) — a
    callback that stalls has its own frame dropped — or strictly after raf[i] but before
    callback i was entered (`entry_abs`, performance.now() on entry on the rAF clock): vsyncs
    that passed while callback i had not even begun, which the frame clock cannot show (its
    timestamps stay on the vsync grid). Both less the matching tolerance. Either signal makes
    the interval late; an on-time frame (one vsync, presented) is never late, whatever its
    callback's entry jitter. On a nearly quiet run of the 42 ms-stall fixture, Chromium
    marked 20 of 25 stall intervals and the frame clock the other 5 (Chromium reported those
    vsyncs as presented by the compositor alone)."""
    iv = np.diff(raf)
    clock_late = iv >= settings.late_frame_vsyncs * vsync_ms
    info: dict[str, Any] = {"late_by_frame_clock": int(clock_late.sum())}
    t = np.asarray(chromium.get("t_ms") or [], float)
    fate = chromium.get("fate") or ""
    align = trace_alignment(raf, t, settings.trace_match_ms) if t.size else None
    if align is not None and raf.size:
        # The trace holds a frame only where the page produced one: a scene that redraws every
        # 3rd frame (or stands still) leaves most rAF timestamps without a frame to find, so
        # the anchoring also counts the other way: the trace's frames inside the played
        # window that find a rAF timestamp.
        inside = t[(t >= raf[0] - settings.trace_match_ms) & (t <= raf[-1] + settings.trace_match_ms)]
        back = trace_alignment(inside, raf, settings.trace_match_ms) if inside.size else None
        align = max(align, back or 0.0)
    info["trace_alignment"] = None if align is None else round(align, 4)
    if align is not None and align >= settings.trace_alignment_min and len(fate) == t.size:
        tol = settings.trace_match_ms
        dropped = np.sort(t[np.frombuffer(fate.encode(), np.uint8) == ord("D")])

        def any_in(lo_ms: np.ndarray, hi_ms: np.ndarray) -> np.ndarray:
            return np.searchsorted(dropped, hi_ms, side="left") > np.searchsorted(dropped, lo_ms, side="left")

        chrom_late = any_in(raf[:-1] - tol, raf[1:] - tol)
        if entry_abs is not None and entry_abs.size == raf.size:
            chrom_late |= any_in(raf[1:] + tol, np.maximum(raf[1:] + tol, entry_abs[1:] - tol))
        info["late_by_chromium"] = int(chrom_late.sum())
        return clock_late | chrom_late, CHROMIUM_LATE, info
    if chromium.get("error"):
        info["trace_unusable"] = chromium["error"]
    elif align is not None:
        info["trace_unusable"] = (
            f"only {align:.0%} of rAF timestamps found their frame in the trace "
            f"(needs {settings.trace_alignment_min:.0%})"
        )
    return clock_late, FRAME_CLOCK_LATE, info


def chromium_figure(chromium: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """measurements.smoothness.chromium: {dropped_frame_pct, frames_presented, source} over
    the played duration, from Chromium's frame reporting of the demo's renderer."""
    src = chromium.get("source") or "trace"
    t = np.asarray(chromium.get("t_ms") or [], float)
    fate = np.frombuffer((chromium.get("fate") or "").encode(), np.uint8)
    if chromium.get("error") or t.size == 0 or fate.size != t.size:
        why = chromium.get("error") or "no frames reported"
        return {
            "dropped_frame_pct": None,
            "frames_presented": None,
            "frames_dropped": None,
            "source": f"unavailable ({why})",
        }
    sel = (t >= 0) & (t <= duration_s * 1000)
    f = fate[sel]
    presented, dropped = int(np.sum(f == ord("P"))), int(np.sum(f == ord("D")))
    comp = np.frombuffer((chromium.get("compositor_animation") or "").encode(), np.uint8)
    comp_share = float(np.mean(comp[sel] == ord("1"))) if comp.size == t.size and sel.any() else None
    return {
        "dropped_frame_pct": round(100.0 * dropped / (presented + dropped), 2) if presented + dropped else None,
        "frames_presented": presented,
        "frames_dropped": dropped,
        "compositor_animation_share": None if comp_share is None else round(comp_share, 4),
        "source": src,
    }


def _windows(inp: ScoreInput, duration: float) -> dict[str, tuple[float, float]]:
    a, b = inp.scenario.dense_window_s
    w = {"full": (0.0, duration)}
    if a < duration:
        w["dense"] = (a, min(b, duration))
    return w


def _render(inp: ScoreInput, score: ItemScore, out_dir: Path) -> list[str]:
    from skycity_bench.media.evidence_figures import frame_pacing_plot

    d: FramePacingEvidence = inp.evidence("frame_pacing")
    name = "frame_pacing.png"
    frame_pacing_plot(
        out_dir / name,
        np.asarray(d.raf_ms),
        np.asarray(d.entry_ms),
        _windows(inp, d.duration_s),
        inp.item.get("long_frame_ms"),
        score.evidence,
    )
    return [name]


def _r(d: dict[str, Any] | None) -> dict[str, float]:
    return {k: round(v, 5) for k, v in (d or {}).items() if isinstance(v, float)}


@dataclass
class _Pass:
    """One frame-pacing pass as the scorer reads it: its clocks as arrays, Chromium's account,
    the scenario's thresholds and the rubric item's tier table."""

    d: FramePacingEvidence
    settings: Settings
    raf: np.ndarray
    entry: np.ndarray
    drew: np.ndarray
    chromium: dict[str, Any]
    vsync: float
    long_ms: Any
    tiers: list[dict[str, Any]]
    floor: Any
    top: Any

    @classmethod
    def read(cls, inp: ScoreInput) -> _Pass:
        d: FramePacingEvidence = inp.evidence("frame_pacing")
        tiers = inp.item.require("tiers")
        return cls(
            d=d,
            settings=inp.settings("frame_pacing"),
            raf=np.asarray(d.raf_ms, float),
            entry=np.asarray(d.entry_ms, float),
            drew=np.asarray(d.drew, int),
            chromium=d.chromium.model_dump(exclude_none=True),
            vsync=inp.scenario.calibration.expected_interval_ms,
            long_ms=inp.item.require("long_frame_ms"),
            tiers=tiers,
            floor=inp.item.require("floor_points"),
            top=max(t["points"] for t in tiers),
        )


def _late_side(p: _Pass, late: np.ndarray) -> dict[str, Any] | None:
    """Which side took the time in the late frames (_pacing_side.py), when the sampler kept
    the main thread's time per frame."""
    off = p.d.entry_to_raf_ms
    lag = None if off is None or p.entry.size != p.raf.size else p.entry + float(off) - p.raf
    s = p.settings
    return late_side(late, p.d.main_ms, lag, p.vsync, s.side_busy_share, s.side_lag_vsyncs, s.side_majority)


def _decided_intervals(p: _Pass) -> tuple[np.ndarray, dict[str, Any], np.ndarray]:
    """The decided intervals (rAF's, lengthened to the entry clock's only where a frame was
    late) and measurements.smoothness.clocks: which signals found the late frames, and why."""
    settings, raf, entry = p.settings, p.raf, p.entry
    if raf.size >= 2:
        off = p.d.entry_to_raf_ms
        late, late_by, late_info = late_intervals(
            raf, p.chromium, settings, p.vsync, None if off is None else entry + float(off)
        )
        iv_raf, iv_entry = np.diff(raf), np.diff(entry)
        iv = np.where(late, np.maximum(iv_raf, iv_entry), iv_raf)
        lengthened = late & (iv_entry > iv_raf)
    else:
        late = lengthened = np.zeros(0, bool)
        late_by, late_info, iv = FRAME_CLOCK_LATE, {}, np.zeros(0)
    why = (
        "a frame counts longer than the frame clock says only when it was late: the frame clock skipped "
        f"a vsync (interval ≥ {settings.late_frame_vsyncs:g} × {p.vsync:g} ms)"
        + (
            " or Chromium dropped the page's frame in that interval (not presented at its vsync)"
            if late_by == CHROMIUM_LATE
            else f"; Chromium's account was not usable ({late_info.get('trace_unusable', 'tracing off')})"
        )
    )
    clocks = {
        "decided_by": "rAF timestamp, lengthened to performance.now() on entry in late frames",
        "late_frames_from": late_by,
        "why": why,
        **late_info,
        "late_intervals": int(late.sum()),
        "lengthened_intervals": int(lengthened.sum()),
    }
    return iv, clocks, late


def _window_figure(p: _Pass, iv: np.ndarray, a: float, b: float) -> dict[str, Any]:
    """One window's figures: the decided P95 and long-frame share, its tier, each clock's own
    figures and which clock decided."""
    res = p.settings.clock_resolution_ms
    sd = interval_stats(iv, p.raf[1:], a, b, p.long_ms, res)
    if sd is None:
        return {"p95_ms": None, "long_frame_ratio": None, "window_s": [a, b], "intervals": 0}
    sr = window_stats(p.raf, a, b, p.long_ms, res)
    se = window_stats(p.entry, a, b, p.long_ms, res)
    assert sr is not None  # the same end frames as the decided intervals'
    p95, lr = sd["p95_ms"], sd["long_frame_ratio"]
    p95_by = RAF if p95 <= sr["p95_ms"] + 1e-9 else ENTRY
    lr_by = RAF if lr <= sr["long_frame_ratio"] + 1e-12 else ENTRY
    return {
        "p95_ms": round(p95, 3),
        "long_frame_ratio": round(lr, 5),
        "tier": stats.tier(p95, lr, p.tiers, p.floor, resolution_ms=res),
        "window_s": [a, b],
        "intervals": sd["intervals"],
        "raf": _r(sr),
        "entry": _r(se),
        "decided": _r(sd),
        "raf_tier": stats.tier(sr["p95_ms"], sr["long_frame_ratio"], p.tiers, p.floor, resolution_ms=res),
        "p95_decided_by": p95_by,
        "long_frame_ratio_decided_by": lr_by,
        "clocks_disagree": ENTRY in (p95_by, lr_by),
    }


def _machine_headroom(p: _Pass, m: dict[str, Any], ev: dict[str, Any]) -> None:
    """The machine's headroom at this viewport (the probe's standard scene), and whether a
    tier lost is flagged as possibly the machine's: the scene could not hold 60 Hz and the
    late frames were not the page's main thread's."""
    room = p.d.headroom
    if not room or "holds_60hz" not in room:
        return
    m["machine_headroom"] = room
    side = (m.get("late_side") or {}).get("side")
    if room["holds_60hz"] or m["tier"] == p.top or side == "main_thread":
        return
    m["machine_bound"] = True
    ev["machine_headroom"] = (
        f"this machine could not render a standard scene at {room['viewport']} at 60 Hz (P95 {room['p95_ms']} ms, "
        f"{room['late_share']:.1%} of intervals late): the tier lost may be the machine's, not the demo's"
    )


def _noise_bound(p: _Pass, m: dict[str, Any]) -> None:
    """A tier lost on a machine the probe found too noisy to trust (after its re-run) while
    the page's own frame work fit in the frame: flagged as possibly the machine's, and the
    late side names the machine. Stolen or contended CPU time makes every thread start late,
    the page's main thread included, which the split alone would charge to the page; where
    the page's script, style, layout and paint filled the frames the tier stays the page's."""
    too_noisy = p.d.noise.model_dump().get("too_noisy")
    side = m.get("late_side")
    if not too_noisy or m["tier"] == p.top or not side:
        return
    told = side["main_thread"] + side["rendering"]
    script = side["main_thread_script"]
    if told == 0 or script >= p.settings.side_majority * told:
        return
    m["machine_bound"] = True
    side["side"] = "machine"
    n = side["late_intervals"]
    side["sentence"] = (
        f"The machine took the time, not the page's script: the pass was too noisy to trust "
        f"({'; '.join(too_noisy)}), and in {told - script} of {n} late frames the page's script, style, "
        f"layout and paint ran under {side['busy_ms']:.1f} ms; their callbacks started late or the frame "
        "was held up after it, as any thread's are when the machine's CPU is taken."
    )


def _noise_figure(p: _Pass) -> dict[str, Any]:
    """The machine's noise around the pass as the probe judged it (empty when not measured)."""
    noise = p.d.noise.model_dump()
    if not noise:
        return {}
    return {
        "too_noisy": noise.get("too_noisy") or [],
        "passes": p.d.passes,
        "cpu": noise.get("cpu"),
        "calibration_p95_ms": [(noise.get(f"calibration_{w}") or {}).get("p95_ms") for w in ("before", "after")],
    }


def _summary(p: _Pass, m: dict[str, Any], ev: dict[str, Any]) -> None:
    """The evidence's summary of the measurements: the tier, each window's deciding figures,
    the clocks, Chromium's account, the scene's updates and the machine's noise."""
    ev.update(
        {
            "tier": m["tier"],
            "windows": {
                k: {
                    kk: v.get(kk)
                    for kk in (
                        "p95_ms",
                        "long_frame_ratio",
                        "tier",
                        "window_s",
                        "p95_decided_by",
                        "long_frame_ratio_decided_by",
                    )
                }
                for k, v in m.items()
                if k in ("full", "dense")
            },
            "clocks": m["clocks"],
            "chromium": m["chromium"],
            "scene_update_ratio": m["scene_update_ratio"],
            "longest_scene_freeze_s": m["longest_scene_freeze_s"],
        }
    )
    if m.get("late_side"):
        ev["late_side"] = m["late_side"]["sentence"]
    too_noisy = p.d.noise.model_dump().get("too_noisy")
    if too_noisy:
        ev["machine_noise"] = (
            "the machine was too noisy to trust this pass"
            + (f" (also after {p.d.passes} passes)" if p.d.passes > 1 else "")
            + ": "
            + "; ".join(too_noisy)
        )


@scorer("smoothness.frame_pacing", probes=("frame_pacing",), render=_render, accepts={"frame_pacing": ("3",)})
def frame_pacing(inp: ScoreInput) -> ItemScore:
    """The worse window's tier, or review where the scene froze or the two clocks' accounts
    disagree by design, untested where the demo threw before drawing."""
    p = _Pass.read(inp)
    duration = p.d.duration_s
    ev: dict[str, Any] = {"frames": p.d.frames, "long_frame_ms": p.long_ms}
    iv, clocks, late = _decided_intervals(p)
    m: dict[str, Any] = {"clocks": clocks}
    if side := _late_side(p, late):
        m["late_side"] = side
    worst = None
    for wname, (a, b) in _windows(inp, duration).items():
        m[wname] = _window_figure(p, iv, a, b)
        if m[wname]["p95_ms"] is not None:
            t = m[wname]["tier"]
            worst = t if worst is None else min(worst, t)
    if "dense" not in m or m["dense"].get("p95_ms") is None:
        ev["note"] = (
            f"the run played {duration:g} s, which does not reach the dense window "
            f"{list(inp.scenario.dense_window_s)} s: the tier comes from the full window only"
        )
    ratio, freeze = scene_updates(p.raf, p.drew)
    m["scene_update_ratio"] = None if ratio is None else round(ratio, 4)
    m["longest_scene_freeze_s"] = round(freeze, 3)
    m["chromium"] = chromium_figure(p.chromium, duration)
    if noise := _noise_figure(p):
        m["noise"] = noise
    # the real-time video for 录屏复核 (not scored); imported here, as the figures are, so
    # that scoring alone never loads the video libraries
    from skycity_bench.media.realtime_video import capture_summary

    m["realtime_video"], ev["realtime_capture"] = capture_summary(inp.records)
    m["tier"] = p.floor if worst is None else worst
    _machine_headroom(p, m, ev)
    _noise_bound(p, m)
    _summary(p, m, ev)
    meas = {"smoothness." + k: v for k, v in m.items()}
    if _never_drew(p) and p.d.page_errors:
        # Nothing was ever drawn and the page threw: there is no playback to judge, whether or
        # not its empty frames were timed (on a loaded machine the first frame after load can
        # come so late that no interval is left in the pass: that is no freeze to fail).
        ev["outcome"] = Outcome.THREW_BEFORE_DRAWING.value
        ev["reason"] = f"the demo threw before drawing anything: {p.d.page_errors[0]}"
        return ItemScore("untested", None, ev, meas, cause=Cause.PAGE)
    if worst is None:
        ev["outcome"] = Outcome.NO_INTERVALS.value
        ev["reason"] = "no frame intervals were recorded: playback froze (播放持续卡死)"
        return ItemScore("fail", p.floor, ev, meas)
    return _verdict(p, m["tier"], ratio, freeze, m["chromium"], ev, meas)


def _never_drew(p: _Pass) -> bool:
    """No frame of the pass drew, or the page never made a canvas / WebGL draw call from load
    on and its picture is one flat colour (a DOM change, such as sizing the canvas, is no
    drawing)."""
    pic = p.d.picture and p.d.picture.model_dump()
    return not p.drew.any() or (p.d.painted_frames == 0 and is_flat(pic, p.settings.blank_flat_share))


def _verdict(
    p: _Pass,
    tier: Any,
    ratio: float | None,
    freeze: float,
    chrom: dict[str, Any],
    ev: dict[str, Any],
    meas: dict[str, Any],
) -> ItemScore:
    """The item's result once the pass has intervals: review where the scene froze or the
    clocks disagree by design, else the tier."""
    settings, duration = p.settings, p.d.duration_s
    both = (
        f"the sampler: tier {tier}, scene updated in {0 if ratio is None else ratio:.0%} of frames; "
        f"Chromium: {_chrom_text(chrom)}"
    )
    frozen = ratio is None or ratio < settings.min_scene_update_ratio or freeze > settings.max_freeze_s
    if frozen:
        _frozen(p, tier, ratio, freeze, chrom, both, ev)
        if tier == p.floor and ev["outcome"] == Outcome.SCENE_FROZEN.value:
            # The look cannot be better than the figures here: the rAF figures already give the
            # lowest tier, and a scene that also froze only looks worse. Nothing for a
            # reviewer to raise; the freeze stays in the reason.
            ev["outcome"] = Outcome.FROZEN_AT_FLOOR.value
            seen = ev["reason"].split(": ", 1)[0]
            ev["reason"] = f"tier {tier} by the rAF figures, and {seen}: a freeze cannot raise the lowest tier"
            return ItemScore("fail", float(tier), ev, meas)
        return ItemScore("review", None, ev, meas)
    pct = chrom.get("dropped_frame_pct")
    if pct is not None and _enough(chrom, duration, p.vsync, settings):
        if tier == p.top and pct > settings.chromium_review_dropped_pct:
            ev["disagreement"] = "raf_smooth_chromium_dropped"
            ev["outcome"] = Outcome.RAF_SMOOTH_CHROMIUM_DROPPED.value
            ev["reason"] = (
                f"rAF reads smooth (tier {tier}) but Chromium dropped {pct:g} % of frames (more than "
                f"{settings.chromium_review_dropped_pct:g} %): the frames did not reach the screen on time "
                f"although the page's callbacks did: pending review (待复核) with both figures — {both}"
            )
            return ItemScore("review", None, ev, meas)
        if tier < p.top and pct <= settings.chromium_smooth_dropped_pct:
            ev["disagreement"] = "raf_janky_chromium_smooth"
            ev["outcome"] = Outcome.RAF_JANKY_CHROMIUM_SMOOTH.value
            ev["reason"] = (
                f"rAF reads tier {tier} but Chromium presented its frames on time ({pct:g} % dropped, "
                f"at most {settings.chromium_smooth_dropped_pct:g} %): pending review (待复核) with both "
                f"figures — {both}"
            )
            return ItemScore("review", None, ev, meas)
    status = "pass" if tier == p.top else ("fail" if tier == p.floor else "partial")
    ev["outcome"] = Outcome.TIER.value
    if tier != p.top and ev.get("late_side"):
        ev["summary"] = f"tier {tier}. {ev['late_side']}" + (
            f" Flagged: {ev['machine_headroom']}." if ev.get("machine_headroom") else ""
        )
        if meas.get("smoothness.machine_bound") and not ev.get("machine_headroom"):
            ev["summary"] += " Flagged: the tier lost may be the machine's, not the demo's."
    return ItemScore(status, float(tier), ev, meas)


def _frozen(
    p: _Pass, tier: Any, ratio: float | None, freeze: float, chrom: dict[str, Any], both: str, ev: dict[str, Any]
) -> None:
    """Why a pass whose scene froze goes to review: a compositor-only animation Chromium saw,
    or a scene that stood still while rAF ran."""
    settings = p.settings
    comp = chrom.get("compositor_animation_share")
    if (
        comp is not None
        and comp >= settings.compositor_animation_min_share
        and _enough(chrom, p.d.duration_s, p.vsync, settings)
    ):
        ev["reason"] = (
            f"the sampler and Chromium disagree by design: a compositor animation ran in {comp:.0%} of "
            f"Chromium's frames while the page's own rAF scene drew in "
            f"{0 if ratio is None else ratio:.0%} of frames (rAF polling cannot see the compositor): "
            f"pending review (待复核) with both figures — {both}"
        )
        ev["disagreement"] = "compositor_only_animation"
        ev["outcome"] = Outcome.COMPOSITOR_ONLY.value
    else:
        ev["outcome"] = Outcome.SCENE_FROZEN.value
        ev["reason"] = (
            f"the scene updated in {0 if ratio is None else ratio:.0%} of frames (needs ≥ "
            f"{settings.min_scene_update_ratio:.0%}) and froze up to {freeze:.2f} s (limit "
            f"{settings.max_freeze_s:g} s) while rAF ran: pending review (待复核), never full marks; "
            f"the rAF figures would give tier {tier}; Chromium: {_chrom_text(chrom)}"
        )


class Outcome(str, Enum):
    """How smoothness.frame_pacing was decided (a code in the evidence beside the prose)."""

    TIER = "tier"  # the rubric's tier table decided
    NO_INTERVALS = "no_intervals"  # playback froze: no interval at all
    THREW_BEFORE_DRAWING = "threw_before_drawing"  # untested: nothing drawn, the page threw
    SCENE_FROZEN = "scene_frozen"  # review: rAF ran, the scene did not update
    FROZEN_AT_FLOOR = "scene_frozen_at_floor"  # fail: the lowest tier, and the scene froze too
    COMPOSITOR_ONLY = "compositor_only_animation"  # review: animated by the compositor only
    RAF_SMOOTH_CHROMIUM_DROPPED = "raf_smooth_chromium_dropped"  # review: the clocks disagree
    RAF_JANKY_CHROMIUM_SMOOTH = "raf_janky_chromium_smooth"  # review: the clocks disagree


def _enough(chrom: dict[str, Any], duration: float, vsync: float, settings: Settings) -> bool:
    """Chromium reported enough of the pass's vsyncs to be read as a figure at all."""
    n = (chrom.get("frames_presented") or 0) + (chrom.get("frames_dropped") or 0)
    return bool(n >= settings.chromium_min_frames_share * duration * 1000.0 / vsync)


def _chrom_text(chrom: dict[str, Any]) -> str:
    if chrom.get("dropped_frame_pct") is None:
        return str(chrom.get("source", "unavailable"))
    return f"{chrom['dropped_frame_pct']:g} % of frames dropped, {chrom['frames_presented']} presented"
