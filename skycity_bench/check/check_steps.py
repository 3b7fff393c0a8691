"""The check profile's own collection steps (check.py), run by runner.execute like any
probe: same budgets, restarts, errors-as-evidence and report. They collect raw figures
only; the scorers and check.py's verdicts judge them.

- check_tour: one fake-clock page from 0 to the last of tour.after_s, fast-forwarded
  tour.ff_step_ms per animation frame (far fewer frames than the timeline probe's 60 Hz
  pass): the hook read whole at three moments, thumbnails of the opening seconds and the
  distances of the frames after the tour to them and to the closing shot, the hook's own
  time, and one density frame pair (vision.analyse_pair, the density probe's analysis);
- density: that frame pair as the density probe's evidence (one sample), so the density
  scorers judge it;
- shops: the shops probe's hover phase (probes.shops.hover_touch.hover_phase) as the shops
  probe's evidence, the shop list from the tour's first hook read (or its own page).
"""

from __future__ import annotations

import asyncio
from typing import Any

from skycity_bench.browser.clock_budget import watched
from skycity_bench.common.errors import Cause, ProbeError
from skycity_bench.evidence.density import DensityEvidence
from skycity_bench.probes import ProbeSpec, registry

_FRAME_MS = 1000.0 / 60.0
GETTERS = ("getState", "getShops", "getDynamicObjects", "getActiveCard")


# Playwright's fastForward, one step after the other, in one call into the page: the same
# timers and animation frames at the same times as one page.clock.fast_forward(step) per step
# (Playwright's clock yields to the page's task queue between timers either way), without a
# round trip through the driver, and an init script added to the context for Playwright's
# clock log, per frame.
_FF_STEPS = (
    "async (steps) => { const c = globalThis.__pwClock.controller; for (const s of steps) await c.fastForward(s); }"
)


async def _ff(dp, to_s: float, now_s: float, step_ms: int) -> float:
    """Fast-forward the fake clock from bench time now_s to to_s, step_ms per frame; timed
    as any clock advance (clock_budget.watched: slow told from hung)."""
    steps = []
    while now_s < to_s - 1e-6:
        step = min(step_ms, max(1, int(round((to_s - now_s) * 1000))))
        steps.append(step)
        now_s += step / 1000
    if not steps:
        return now_s
    what = f"fast-forwarding the clock {sum(steps)} ms, {len(steps)} steps"
    if len(dp.page.frames) > 1:
        # Playwright advances every frame's clock: a page with frames keeps its calls
        for step in steps:
            await watched(dp, dp.page.clock.fast_forward(step), ms=step, frames=1, what=what)
    else:
        await watched(dp, dp.page.evaluate(_FF_STEPS, steps), ms=sum(steps), frames=len(steps), what=what)
    return now_s


async def read_hook(dp, t_s: float) -> dict:
    """describe() and one call of each getter, stored raw ({ok, value, error})."""
    desc = await dp.hook.describe()
    calls = {}
    if desc.ok:
        for m in GETTERS:
            calls[m] = (await dp.hook.call(m)).to_json()
    return {"t_s": round(t_s, 2), "describe": desc.to_json(), "calls": calls}


async def _density_pair(ctx, dp, t_s: float) -> dict:
    """Frame A at t, the hook's visible claims at t, frame B Δ later, analysed as the
    density probe analyses its pairs (same settings: probes.density)."""
    from skycity_bench.analysis.vision import analyse_pair

    s = ctx.scenario.probe_settings("density")
    a = await dp.frame()
    hc = await dp.hook.call("getDynamicObjects")
    claims = (
        [c for c in hc.value if not (isinstance(c, dict) and c.get("visible") is False)]
        if hc.ok and isinstance(hc.value, list)
        else None
    )
    await dp.run_for(s.delta_frames * _FRAME_MS)
    t_b = round(await dp.now_s(), 3)
    b = await dp.frame()
    res = await asyncio.to_thread(analyse_pair, a, b, claims, s.params())
    sample = {"t": t_s, "t_b": t_b, "densified": False, **res.data}
    if not hc.ok:
        sample["hook_error"] = hc.error
    return sample


def tour_step(tour, budget_s: float, order: int) -> ProbeSpec:
    from skycity_bench.analysis.motion import tiny, tiny_distance

    async def collect(ctx) -> dict:
        dp = await ctx.open_page(fake_clock=True)
        out: dict[str, Any] = {"ff_step_ms": tour.ff_step_ms, "hook": []}
        opening: list = []
        post: list[dict] = []
        try:
            now = await _ff(dp, tour.hook_at_s, await dp.now_s(), tour.ff_step_ms)
            out["hook"].append(await read_hook(dp, now))
            for t in tour.opening_s:
                now = await _ff(dp, t, now, tour.ff_step_ms)
                opening.append((t, tiny(await dp.frame())))
            out["hook_time_opening"] = await _hook_time(dp)
            now = await _ff(dp, tour.density_at_s, now, tour.ff_step_ms)
            out["density_sample"] = await _density_pair(ctx, dp, tour.density_at_s)
            now += ctx.scenario.probe_settings("density").delta_frames * _FRAME_MS / 1000
            out["hook"].append(await read_hook(dp, now))
            now = await _ff(dp, tour.tour_end_s, now, tour.ff_step_ms)
            end = tiny(await dp.frame())
            for t in tour.after_s:
                now = await _ff(dp, t, now, tour.ff_step_ms)
                img = tiny(await dp.frame())
                d_open, open_t = min((tiny_distance(img, o), ot) for ot, o in opening)
                post.append(
                    {
                        "t_s": t,
                        "d_open": round(d_open, 4),
                        "open_t_s": open_t,
                        "d_end": round(tiny_distance(img, end), 4),
                    }
                )
            last = await read_hook(dp, now)
            out["hook"].append(last)
            st = last["calls"].get("getState") or {}
            out["hook_time_end"] = _time_of(st)
        except ProbeError as e:
            e.data = {**(e.data or {}), **out, "post": post}
            raise
        finally:
            await dp.close()
        out["post"] = post
        return out

    return ProbeSpec(
        name="check_tour",
        collect=collect,
        order=order,
        budget=lambda sc: budget_s,
        description="check: one fake-clock page to the end of after_s: hook reads, reset frames, "
        "one density frame pair",
    )


async def _hook_time(dp) -> float | None:
    return _time_of((await dp.hook.call("getState")).to_json())


def _time_of(st: dict) -> float | None:
    v = st.get("value") if st.get("ok") else None
    t = v.get("time") if isinstance(v, dict) else None
    return t if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def density_step(budget_s: float, order: int) -> ProbeSpec:
    """The tour's frame pair as the density probe's evidence (one sample, no densifying)."""
    real = registry.get("density")

    async def collect(ctx) -> DensityEvidence:
        tour = ctx.artifacts.get("check_tour")
        if tour is None or tour.status != "ok" or "density_sample" not in (tour.data or {}):
            why = tour.error if tour is not None and tour.error else "the tour did not run"
            # the tour's own cause where it failed; one that ran but took no pair: the bench's
            cause = Cause.NOT_RUN if tour is None else (tour.cause or Cause.BENCH)
            raise ProbeError(f"no density frame pair: {why}", cause=cause)
        sample = tour.data["density_sample"]
        s = ctx.settings
        first = (tour.data.get("hook") or [{}])[0].get("describe") or {}
        return DensityEvidence.model_validate(
            {
                "hook": {"present": bool(first.get("ok")), "describe": first.get("value"), "error": first.get("error")},
                "delta_ms": round(s.delta_frames * _FRAME_MS, 3),
                "delta_frames": s.delta_frames,
                "other_pair_frames": [],
                "times": [sample["t"]],
                "densified_times": [],
                "densify_error": None,
                "lowest_evidence": None,
                "samples": [sample],
                "page_errors": [],
                "note": "check: one frame pair from the check's fast-forwarded tour",
            }
        )

    return ProbeSpec(
        name="density",
        collect=collect,
        version=real.version,
        order=order,
        settings=real.settings,
        budget=lambda sc: budget_s,
        description="check: the tour's frame pair as density evidence",
    )


def shops_step(tour_cfg, budget_s: float, order: int) -> ProbeSpec:
    """The shops probe's hover phase, as the shops probe's evidence. Without the check's tour
    (--only shops_hover) the hook's shop list is read on a page of its own at the same demo
    time as the tour reads it (tour_cfg.hook_at_s)."""
    from skycity_bench.evidence.shops import ShopsEvidence
    from skycity_bench.probes.shops.hover_touch import hover_phase
    from skycity_bench.probes.shops.shop_page import valid_shops

    real = registry.get("shops")

    async def collect(ctx):
        tour = ctx.artifacts.get("check_tour")
        reads = (tour.data or {}).get("hook") if tour is not None else None
        if reads:
            desc, r = reads[0]["describe"], reads[0]["calls"].get("getShops")
            r = r or {"ok": False, "error": desc.get("error")}
        else:  # --only shops_hover: the list from a page of its own
            dp = await ctx.open_page(fake_clock=True)
            try:
                await dp.run_for(tour_cfg.hook_at_s * 1000)
                r = (await dp.hook.call("getShops")).to_json()
            finally:
                await dp.close()
        if not r.get("ok"):
            raise ProbeError(f"getShops(): {r.get('error')}", cause=Cause.PAGE)
        shops, problems = valid_shops(r["value"])
        if not shops:
            raise ProbeError(
                "the hook lists no usable shop: nothing to hover (" + ("; ".join(problems) or "empty list") + ")",
                cause=Cause.PAGE,
            )
        hover = await hover_phase(ctx, shops)
        vp = ctx.scenario.viewport
        return ShopsEvidence(
            shops=shops,
            hook_problems=problems,
            hook_raw_count=len(r["value"]),
            viewport=[vp.width, vp.height],
            hover=hover,
        )

    return ProbeSpec(
        name="shops",
        collect=collect,
        version=real.version,
        order=order,
        settings=real.settings,
        budget=lambda sc: budget_s,
        description="check: the shops probe's hover phase",
    )
