"""`run --overlap pinned` (inputs/cpu_pinning.py does the pinning): the fake-clock
probes on other browsers DURING the real-time probes, pinned to other cores, with the
perturbation they cause measured around it (judging/scorers/overlap.py judges it) and the
real-time probes run again alone when it is too large."""

from __future__ import annotations

import asyncio
import time

from skycity_bench.browser.rate_calibration import calibrate
from skycity_bench.common.run_progress import Progress
from skycity_bench.inputs import cpu_pinning as pinning
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.probes import ProbeSpec
from skycity_bench.reporting.run_report import Report
from skycity_bench.running.run_profile import Profile
from skycity_bench.running.side_by_side import run_side_by_side


class NoOverlap(Exception):
    """`run --overlap` cannot be done in this run (before anything ran): why."""


async def run_overlapped(
    report: Report,
    scenario: Scenario,
    profile: Profile,
    realtime: list,
    rest: list,
    handle,
    side: list,
    one,
    progress: Progress,
    weight,
) -> None:
    """`run --overlap pinned` (inputs/cpu_pinning.py): the fake-clock probes on the `side`
    browsers DURING the real-time probes on `handle`, pinned apart. Around it a blank page's
    rAF on the pinned pacing browser alone (before the probes start) and beside them;
    judging/scorers/overlap.py judges the change, and when it is too large the terminal and
    the report say so and the real-time probes run again alone once the others are done. The
    report's environment.overlap keeps the CPUs, what the kernel said of every thread's mask,
    the timeline, the perturbation figures, and the pacing figures of both passes."""
    try:
        split = pinning.plan_split(scenario.overlap, force=profile.overlap == "pinned-force")
        pacing_pid = await pinning.browser_pid(handle)
    except Exception as e:  # `run` refuses the first before a browser starts; a Chromium that names no pid
        raise NoOverlap(
            str(e).removeprefix(f"--overlap {profile.overlap}: ").removeprefix("--overlap pinned: ")
        ) from None
    run = _Overlap(report, scenario, profile, realtime, handle, side, one, progress, weight)
    run.rec.update({**split.to_json(), "side_browsers": len(side)})
    # a fake-clock probe reading a real-time one's evidence waits for it (none does today)
    made = {n for s in realtime for n in (s.name, *s.produces)}
    now = [s for s in rest if not set(s.after) & made]
    later = [s for s in rest if s not in now]
    pinner = pinning.Pinner(split, pacing_pid)
    run.rec["pacing_browser_pid"] = pinner.pacing_pid
    progress.log(
        f"overlap: the fake-clock probes run beside the real-time ones; the pacing browser on CPU "
        f"{pinning.cpu_ranges(split.pacing)}, everything else on CPU {pinning.cpu_ranges(split.others)}"
        + (" (forced: too few cores for a fair split)" if split.forced else "")
    )
    alone, beside, side_task = await run.pinned_pass(pinner, now)
    run.rec["real_time_ended_s"] = run.elapsed()
    await side_task
    await run.judge(alone, beside)
    if later:
        await run_side_by_side(later, [handle], one, weight=weight)


class _Overlap:
    """One overlapped run: its record (report.environment.overlap), its timeline, and the
    blank-page measurements around the real-time probes."""

    def __init__(self, report, scenario, profile, realtime, handle, side, one, progress, weight) -> None:
        self.report, self.scenario, self.realtime, self.handle = report, scenario, realtime, handle
        self.side, self.one, self.progress, self.weight = side, one, progress, weight
        self.o = scenario.overlap
        self.long_ms, self.res = long_frame_ms(profile, scenario)
        self.rec: dict = {"mode": profile.overlap, "used": True}
        report.environment["overlap"] = self.rec
        self.t0 = time.monotonic()
        self.timeline: dict[str, list] = {}

    def elapsed(self) -> float:
        return round(time.monotonic() - self.t0, 2)

    async def timed(self, spec: ProbeSpec, h) -> None:
        start = self.elapsed()
        try:
            await self.one(spec, h)
        finally:
            self.timeline[spec.name] = [start, self.elapsed()]

    async def blank(self, what: str) -> dict:
        start = self.elapsed()
        row = self.progress.task(f"overlap: a blank page on the pacing cores, {what}", self.o.calibration_s)
        long_ms = self.long_ms + self.res if self.long_ms else None
        try:
            return await calibrate(self.handle, self.scenario, self.o.calibration_s, long_frame_ms=long_ms)
        except Exception as e:  # a wedged browser: unmeasured, which the judgement counts
            return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}
        finally:
            row.close()
            self.timeline[f"blank page {what}"] = [start, self.elapsed()]

    async def pinned_pass(self, pinner, now: list):
        """The blank page alone, then the side probes started and the real-time probes run
        beside them, with the blank page beside them before and after; cores pinned apart
        throughout and given back at the end. Returns (alone, beside, the side task)."""
        side_task = None
        pinner.apply()
        keeper = asyncio.ensure_future(pinner.keep(self.o.repin_every_s, self.handle))
        try:
            alone = await self.blank("alone")
            side_task = asyncio.ensure_future(run_side_by_side(now, self.side, self.timed, weight=self.weight))
            beside = {"before the real-time probes": await self.blank("beside the probes, before")}
            for spec in self.realtime:
                await self.timed(spec, self.handle)
            if not side_task.done():
                beside["after the real-time probes"] = await self.blank("beside the probes, after")
            pinner.apply()
            self.rec["affinity"], self.rec["pacing_browser_pid"] = pinner.read_back(), pinner.pacing_pid
        except BaseException:
            if side_task is not None:
                side_task.cancel()
                await asyncio.gather(side_task, return_exceptions=True)
            raise
        finally:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            pinner.restore()  # the probes still running get every core back
            self.rec["pinning"] = pinner.counts()
        return alone, beside, side_task

    async def judge(self, alone: dict, beside: dict) -> None:
        """The perturbation of the pacing cores; too much: the real-time probes again, alone."""
        from skycity_bench.judging.scorers.overlap import perturbation

        rec, progress = self.rec, self.progress
        rec["timeline"] = self.timeline
        p = perturbation(alone, beside, self.scenario.scorer_settings("overlap"))
        rec["perturbation"] = p
        rec["overlapped_pass"] = pacing_figures(self.report, self.realtime, self.long_ms, self.res)
        rec["rerun_alone"] = bool(p["too_perturbed"])
        if not p["too_perturbed"]:
            progress.log(
                f"overlap: the pacing cores' blank page beside the probes: P95 {_pct(p['p95_change'])}, "
                f"long-frame share {_pct(p['long_frame_share_change'], points=True)} against alone "
                f"(limits ±{p['max_p95_change']:.0%}, ±{p['max_long_frame_share_change'] * 100:g} points)"
            )
            return
        why = (
            f"overlap: the probes beside the real-time run disturbed the pacing cores ({'; '.join(p['too_perturbed'])})"
        )
        self.report.warnings.append(
            f"{why}: the real-time probes ran again alone (environment.overlap keeps both passes' figures)"
        )
        progress.log(f"[yellow]{why}: running the real-time probes again alone[/]")
        for h in self.side:  # alone: no browser beside it, not even an idle one
            await h.kill()
        for spec in self.realtime:
            start = self.elapsed()
            await self.one(spec, self.handle)
            self.timeline[f"{spec.name} (alone)"] = [start, self.elapsed()]
        rec["solo_pass"] = pacing_figures(self.report, self.realtime, self.long_ms, self.res)


def _pct(v, points: bool = False) -> str:
    if v is None:
        return "not measured"
    return f"{v * 100:+.2f} points" if points else f"{v:+.1%}"


def long_frame_ms(profile: Profile, scenario: Scenario) -> tuple[float | None, float]:
    """The rubric's long-frame threshold (smoothness.frame_pacing) and the clock resolution
    the frame-pacing scorer adds to it; (None, ...) for a rubric without the item."""
    res = scenario.scorer_settings("frame_pacing").clock_resolution_ms
    try:
        return float(profile.rubric().item("smoothness.frame_pacing").require("long_frame_ms")), res
    except (KeyError, AttributeError, TypeError):
        return None, res


def pacing_figures(report: Report, realtime: list, long_ms: float | None, res: float) -> dict:
    """Each real-time probe's status and wall time, and the frame-pacing pass's P95 and
    long-frame share on the frame clock (rAF timestamps, full run): the figures of the pass
    beside the probes and of the one alone, side by side in the report."""
    import numpy as np

    from skycity_bench.judging.scorers.frame_pacing import window_stats

    out: dict = {}
    for spec in realtime:
        r = report.probes.get(spec.name)
        if r is None:
            continue
        out[spec.name] = {"status": r.status, "error": r.error, "duration_s": r.duration_s}
    fp = report.probes.get("frame_pacing")
    if fp is not None and fp.status == "ok" and long_ms is not None:
        d = fp.data if isinstance(fp.data, dict) else fp.data.model_dump()
        st = window_stats(np.asarray(d.get("raf_ms") or [], float), 0.0, float(d.get("duration_s") or 0), long_ms, res)
        out["frame_pacing"].update(
            {
                "clock": "rAF timestamp, 0 s to the end",
                "frames": d.get("frames"),
                "p95_ms": None if st is None else round(st["p95_ms"], 3),
                "long_frame_share": None if st is None else round(st["long_frame_ratio"], 5),
            }
        )
    return out
