"""`skycity-bench check DEMO.html`: spec compliance in well under a minute, for CI.

No 60 s real-time playback: everything but the 2 s autoplay look runs on the fake clock.
The checks reuse the probes' own collection pieces and the scorers' own judgement, with
settings cut down for speed (CHECK_SETTINGS), so `check` and a full `run` agree on what
passes; where a probe's collection is too slow for a check (the timeline steps 65 s at
10 fps, density samples 16 times), the check takes one sample with the same helpers:

  single_file          packaging probe (static audit + 1 s load) + the network log of every
                       page this check opened; scorer packaging.single_file
  autoplay_muted       playback probe's no-input frames (0, 1, 2 s real time) and sound
                       instrumentation; scorer packaging.autoplay
  hook                 window.skyCityTest present and well-formed (test-hook.md) at 0.5 s,
                       25 s and 64 s: shapes, types, six shops inside the viewport
  shops_hover          the shops probe's hover phase (DOM cards named after the shop);
                       scorer shops.hover: all six open their own card and close it
  pause_resume_replay  playback probe's cycles through the hook (one cycle); scorer
                       packaging.pause_resume_replay
  no_reset_after_60s   fast-forward to 64 s; frames after 60 s compared with the opening
                       (probes/_motion.reset_check) and the hook's own time
  density_sample       one frame pair at 25 s through the density vision (visual count,
                       hook claims verified by their own pixels); scorers density.count and
                       density.categories, plus claim vs verified count

A check ends as pass, fail (with its reason) or skip (what could not be checked and why; a
skip is not a pass). Fast-forward: the fake clock jumps 100 ms per animation frame, which a
demo that caps its frame step at 0.1 s (the usual guard) follows exactly; the hook's own
time shows whether the demo kept up.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from .errors import DemoCrash, DemoHang, ProbeError

# Cut-down probe settings: the same judgement on fewer, shorter samples.
CHECK_SETTINGS: dict[str, dict] = {
    "packaging": {"network_watch_s": 1.0},
    "playback": {"autoplay_times_s": [0.0, 1.0, 2.0], "click_diagnostic": False, "first_play_times_s": [1.0, 2.0],
                 "cycles": 1, "pause_hold_s": 0.5, "resume_s": 0.5},
    "shops": {"hover_times_s": [0.5, 1.8, 3.1, 4.4, 5.7, 7.0, 8.3, 9.6, 10.9, 12.2], "max_screenshots": 12},
}
DENSITY_AT_S = 25.0                 # one sample inside the dense window 20–35 s
OPENING_S = (1.0, 2.0, 3.0)         # frames a reset would return to
TOUR_END_S = 59.5
AFTER_S = (61.0, 62.5, 64.0)        # frames after the 60 s tour
FF_STEP_MS = 100
NAMES = ["single_file", "autoplay_muted", "hook", "shops_hover", "pause_resume_replay", "no_reset_after_60s",
         "density_sample"]


@dataclass
class CheckResult:
    name: str
    status: str                     # pass | fail | skip
    reason: str = ""
    duration_s: float = 0.0
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "reason": self.reason,
                "duration_s": round(self.duration_s, 2), "details": self.details}


def check_scenario(scenario):
    """The scenario with the probes' cut-down settings (only for probes this bench has)."""
    from .probes import registry

    data = scenario.model_dump()
    for name, over in CHECK_SETTINGS.items():
        if name in registry.names():
            data["probes"][name] = {**(data["probes"].get(name) or {}), **over}
    if "playback" in registry.names():
        data["probes"]["playback"].update(width=scenario.viewport.width, height=scenario.viewport.height)
    return type(scenario).model_validate(data)


def score(item_id: str, records: dict, scenario, out_dir: Optional[Path]):
    """The registered scorer's verdict on these records (ItemScore), or None without one."""
    from .rubric import load_rubric
    from .scorers import ScoreInput, all_scorers

    spec = all_scorers().get(item_id)
    rubric = load_rubric(None)
    item = next((i for i in rubric.items if i.id == item_id), None)
    if spec is None or item is None:
        return None
    return spec.fn(ScoreInput(item=item, rubric=rubric, scenario=scenario, records=records, out_dir=out_dir))


def from_item(name: str, res, extra: str = "") -> CheckResult:
    """pass → pass; partial/fail → fail with the scorer's reason; untested/review → skip."""
    if res is None:
        return CheckResult(name, "skip", "no scorer for this item in this bench version")
    ev = dict(res.evidence)
    why = str(ev.get("reason") or ev.get("note") or "; ".join(map(str, ev.get("failed", {}).items())) or res.status)
    if extra:
        why = f"{why}; {extra}" if res.status != "pass" else why
    status = {"pass": "pass", "partial": "fail", "fail": "fail"}.get(res.status, "skip")
    if status == "skip":
        why = f"{res.status}: {why}"
    return CheckResult(name, status, why, details={"item_status": res.status, "points": res.points, "evidence": _trim(ev)})


def _trim(v: Any, depth: int = 0) -> Any:
    if isinstance(v, dict):
        return {k: _trim(x, depth + 1) for k, x in list(v.items())[:40]}
    if isinstance(v, list):
        return [_trim(x, depth + 1) for x in v[:20]]
    if isinstance(v, str):
        return v[:500]
    return v


# ----------------------------------------------------------------- the hook contract
STATE_KEYS = {"time": (int, float), "phase": (int,), "paused": (bool,), "ended": (bool,)}


def hook_problems(desc, calls: dict, viewport: tuple[int, int], methods: dict[str, str]) -> list[str]:
    """What is wrong with the hook (test-hook.md), from describe() and one call of each getter."""
    if not desc.ok:
        return [f"window.skyCityTest: {desc.error}"]
    d = desc.value if isinstance(desc.value, dict) else {}
    out = []
    if d.get("version") != 1:
        out.append(f"version is {d.get('version')!r}, expected 1")
    if not isinstance(d.get("cityName"), str) or not d.get("cityName", "").strip():
        out.append("cityName is missing or not a non-empty string")
    missing = [m for m, real in methods.items() if d.get(real) != "function"]
    if missing:
        out.append(f"missing methods: {', '.join(missing)}")
    st = calls.get("getState")
    if st is not None:
        if not st.ok:
            out.append(f"getState(): {st.error}")
        elif not isinstance(st.value, dict):
            out.append(f"getState() returned {type(st.value).__name__}, not an object")
        else:
            for k, types in STATE_KEYS.items():
                v = st.value.get(k)
                if isinstance(v, bool) and bool not in types or not isinstance(v, types):
                    out.append(f"getState().{k} is {v!r}")
            if isinstance(st.value.get("phase"), int) and st.value["phase"] not in (1, 2, 3, 4):
                out.append(f"getState().phase is {st.value['phase']}, not 1..4")
    sh = calls.get("getShops")
    if sh is not None:
        from .probes.shops.page import valid_shops

        if not sh.ok:
            out.append(f"getShops(): {sh.error}")
        else:
            shops, probs = valid_shops(sh.value)
            out += [f"getShops(): {p}" for p in probs[:5]]
            if len(shops) != 6:
                out.append(f"getShops() lists {len(shops)} usable shops, not 6")
    obj = calls.get("getDynamicObjects")
    if obj is not None:
        if not obj.ok:
            out.append(f"getDynamicObjects(): {obj.error}")
        elif not isinstance(obj.value, list):
            out.append(f"getDynamicObjects() returned {type(obj.value).__name__}, not a list")
        else:
            bad = [i for i, o in enumerate(obj.value) if not _object_ok(o)]
            if bad:
                out.append(f"getDynamicObjects(): {len(bad)} of {len(obj.value)} entries lack id/category/x/y/w/h/"
                           f"visible (first: #{bad[0]})")
    ac = calls.get("getActiveCard")
    if ac is not None:
        if not ac.ok:
            out.append(f"getActiveCard(): {ac.error}")
        elif ac.value is not None and not (isinstance(ac.value, dict) and isinstance(ac.value.get("shopId"), str)
                                           and ac.value.get("trigger") in ("hover", "touch", "auto")):
            out.append(f"getActiveCard() returned {str(ac.value)[:80]}, expected null or {{shopId, trigger}}")
    return out


def _object_ok(o) -> bool:
    if not isinstance(o, dict) or not isinstance(o.get("id"), str) or not isinstance(o.get("category"), str):
        return False
    nums = [o.get(k) for k in ("x", "y", "w", "h")]
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in nums) \
        and isinstance(o.get("visible"), bool)


GETTERS = ("getState", "getShops", "getDynamicObjects", "getActiveCard")


async def read_hook(dp) -> tuple[Any, dict]:
    desc = await dp.hook.describe()
    calls = {}
    if desc.ok:
        for m in GETTERS:
            calls[m] = await dp.hook.call(m)
    return desc, calls


# ----------------------------------------------------------------- the browser part
class _Cx:
    """What the checks share: the browser, the demo, the fast scenario, evidence folder."""

    def __init__(self, handle, demo, scenario, out_dir: Path):
        self.handle, self.demo, self.scenario, self.out_dir = handle, demo, scenario, out_dir
        self.results: dict[str, CheckResult] = {}
        self.shops: list[dict] | None = None
        self.shops_error: str | None = None
        self.packaging: dict | None = None
        self.packaging_error: str | None = None

    def probe_ctx(self, name: str):
        from .probes import ProbeContext

        return ProbeContext(demo=self.demo, scenario=self.scenario, out_dir=self.out_dir, browser=self.handle,
                            settings=self.scenario.probe_settings(name))

    def has(self, probe: str) -> bool:
        from .probes import registry

        return probe in registry.names()


async def _ff(dp, to_s: float, now_s: float) -> float:
    """Fast-forward the fake clock from bench time now_s to to_s, FF_STEP_MS per frame."""
    while now_s < to_s - 1e-6:
        step = min(FF_STEP_MS, max(1, int(round((to_s - now_s) * 1000))))
        await dp.call(dp.page.clock.fast_forward(step), 10 + step / 200, "fast-forwarding the clock")
        now_s += step / 1000
    return now_s


async def _single_file_collect(cx: _Cx) -> None:
    from .probes import packaging

    try:
        cx.packaging = await packaging.collect(cx.probe_ctx("packaging"))
    except ProbeError as e:
        cx.packaging_error = str(e)


def _single_file_judge(cx: _Cx) -> CheckResult:
    from .report import ProbeRecord

    if not cx.has("packaging"):
        return CheckResult("single_file", "skip", "the packaging probe is not in this bench version")
    if cx.packaging is None:
        return CheckResult("single_file", "fail", f"packaging: {cx.packaging_error}")
    net = ProbeRecord(name="network", data={"requests": [r.to_json() for r in cx.handle.requests],
                                            "misses": list(cx.handle.misses), "mode": "offline"})
    recs = {"packaging": ProbeRecord(name="packaging", data=cx.packaging), "network": net}
    return from_item("single_file", score("packaging.single_file", recs, cx.scenario, cx.out_dir))


async def _playback(cx: _Cx, part: str) -> CheckResult:
    from .probes import playback
    from .report import ProbeRecord
    from .scenario import Viewport

    name = "autoplay_muted" if part == "autoplay" else "pause_resume_replay"
    if not cx.has("playback"):
        return CheckResult(name, "skip", "the playback probe is not in this bench version")
    ctx = cx.probe_ctx("playback")
    vp = Viewport(width=ctx.settings.width, height=ctx.settings.height)
    if part == "autoplay":
        data = {"viewport": [vp.width, vp.height], "autoplay": await playback._autoplay(ctx, vp)}
        return from_item(name, score("packaging.autoplay", {"playback": ProbeRecord(name="playback", data=data)},
                                     cx.scenario, cx.out_dir))
    data = {"viewport": [vp.width, vp.height], "pause_resume_replay": await playback._cycles(ctx, vp)}
    res = score("packaging.pause_resume_replay", {"playback": ProbeRecord(name="playback", data=data)},
                cx.scenario, cx.out_dir)
    return from_item(name, res)


async def _shops_hover(cx: _Cx) -> CheckResult:
    from .probes.shops.hover_touch import hover_phase
    from .report import ProbeRecord

    if not cx.has("shops"):
        return CheckResult("shops_hover", "skip", "the shops probe is not in this bench version")
    if not cx.shops:
        return CheckResult("shops_hover", "fail", cx.shops_error or "the hook lists no usable shop: nothing to hover")
    hover = await hover_phase(cx.probe_ctx("shops"), cx.shops)
    rec = ProbeRecord(name="shops", data={"shops": cx.shops, "hover": hover})
    res = from_item("shops_hover", score("shops.hover", {"shops": rec}, cx.scenario, cx.out_dir))
    if res.status == "pass" and len(cx.shops) != 6:
        res.status, res.reason = "fail", f"only {len(cx.shops)} shops (six are asked for)"
    return res


async def _timeline(cx: _Cx) -> None:
    """One fake-clock page to 64 s: hook at 0.5 / 25 / 64 s, the density pair at 25 s, the
    opening frames and the frames after the tour for the reset check."""
    from .probes._motion import reset_check, tiny, tiny_distance
    from .probes.shops.page import valid_shops

    vp = cx.scenario.viewport
    hook_seen: list[tuple[float, list[str]]] = []
    dp = await cx.handle.open_page(cx.scenario, cx.demo.url, fake_clock=True)
    density: CheckResult | None = None
    try:
        now = await dp.now_s()
        now = await _ff(dp, 0.5, now)
        desc, calls = await read_hook(dp)
        hook_seen.append((0.5, hook_problems(desc, calls, (vp.width, vp.height), cx.scenario.hook.methods)))
        if "getShops" in calls and calls["getShops"].ok:
            cx.shops, probs = valid_shops(calls["getShops"].value)
            cx.shops_error = "; ".join(probs) or None
        else:
            cx.shops_error = f"getShops(): {calls['getShops'].error}" if "getShops" in calls else desc.error
        opening = []
        for t in OPENING_S:
            now = await _ff(dp, t, now)
            opening.append((t, tiny(await dp.frame())))
        st_open = await dp.hook.call("getState")
        now = await _ff(dp, DENSITY_AT_S, now)
        density, now = await _density(cx, dp, now)
        desc, calls = await read_hook(dp)
        hook_seen.append((round(now, 2), hook_problems(desc, calls, (vp.width, vp.height), cx.scenario.hook.methods)))
        now = await _ff(dp, TOUR_END_S, now)
        end = tiny(await dp.frame())
        post = []
        for t in AFTER_S:
            now = await _ff(dp, t, now)
            img = tiny(await dp.frame())
            d = [(tiny_distance(img, o), ot) for ot, o in opening]
            best = min(d)
            post.append({"t_s": t, "d_open": round(best[0], 4), "open_t_s": best[1], "d_end": round(tiny_distance(img, end), 4)})
        desc, calls = await read_hook(dp)
        hook_seen.append((round(now, 2), hook_problems(desc, calls, (vp.width, vp.height), cx.scenario.hook.methods)))
        state = calls.get("getState")
    finally:
        await dp.close()
    cx.results["hook"] = _hook_result(hook_seen)
    cx.results["density_sample"] = density
    t_open = st_open.value.get("time") if st_open.ok and isinstance(st_open.value, dict) else None
    cx.results["no_reset_after_60s"] = _reset_result(cx, post, state, reset_check, t_open)


def _hook_result(seen: list[tuple[float, list[str]]]) -> CheckResult:
    bad = [(t, p) for t, p in seen if p]
    details = {"checked_at_s": [t for t, _ in seen], "problems": {f"{t:g}": p for t, p in bad}}
    if not bad:
        return CheckResult("hook", "pass", "present and well-formed at " + ", ".join(f"{t:g} s" for t, _ in seen),
                           details=details)
    t, p = bad[0]
    first_ok = not seen[0][1]
    why = (f"at {t:g} s: " if first_ok or t != seen[0][0] else "") + "; ".join(p[:4])
    if first_ok:
        why = "the hook changed mid-run: " + why
    return CheckResult("hook", "fail", why, details=details)


def _reset_result(cx: _Cx, post: list[dict], state, reset_check, t_open=None) -> CheckResult:
    s = cx.scenario.probe_settings("timeline") if cx.has("timeline") else None
    match = s.reset_match if s else 0.04
    depart = s.reset_depart if s else 0.08
    r = reset_check(post, match=match, depart=depart)
    details = {"frames": post, "match": match, "depart": depart}
    hook_t = state.value.get("time") if state is not None and state.ok and isinstance(state.value, dict) else None
    details["hook_time_at_64s"] = hook_t
    if r["reset"]:
        return CheckResult("no_reset_after_60s", "fail", f"at {r['first_s']:g} s the picture is back at the opening "
                           f"(matches the frame of {r['matches_opening_at_s']:g} s): the demo resets after 60 s",
                           details=details)
    if isinstance(hook_t, (int, float)) and not isinstance(hook_t, bool):
        if isinstance(t_open, (int, float)) and abs(hook_t - t_open) < 0.05:
            return CheckResult("no_reset_after_60s", "skip", f"the demo's own clock stood at {hook_t:.2f} s from "
                               f"{OPENING_S[-1]:g} s to {AFTER_S[-1]:g} s: it never played, so a reset cannot be "
                               "told", details=details)
        if hook_t < 5:
            return CheckResult("no_reset_after_60s", "fail", f"the hook's own time is {hook_t:.2f} s at bench time "
                               f"{AFTER_S[-1]:g} s: the demo went back to its start", details=details)
        if hook_t < 60:
            return CheckResult("no_reset_after_60s", "skip", f"the demo's own clock reached only {hook_t:.1f} s by "
                               f"bench time {AFTER_S[-1]:g} s (it caps its frame step below {FF_STEP_MS} ms): the "
                               "end of its tour was not reached by the fast-forward", details=details)
    return CheckResult("no_reset_after_60s", "pass", "after 60 s the picture stays away from the opening "
                       f"(closest distance {min(p['d_open'] for p in post):.3f} > {match:g})", details=details)


async def _density(cx: _Cx, dp, now: float) -> tuple[CheckResult, float]:
    from .report import ProbeRecord

    if not cx.has("density"):
        return CheckResult("density_sample", "skip", "the density probe is not in this bench version"), now
    from .vision import analyse_pair

    s = cx.scenario.probe_settings("density")
    a = await dp.frame()
    hc = await dp.hook.call("getDynamicObjects")
    claims = [c for c in hc.value if not (isinstance(c, dict) and c.get("visible") is False)] \
        if hc.ok and isinstance(hc.value, list) else None
    delta = s.delta_frames * 1000.0 / 60.0
    await dp.run_for(delta)
    now += delta / 1000
    b = await dp.frame()
    res = await asyncio.to_thread(analyse_pair, a, b, claims, s.params())
    sample = {"t": DENSITY_AT_S, **res.data}
    if not hc.ok:
        sample["hook_error"] = hc.error
    rec = {"density": ProbeRecord(name="density", data={"samples": [sample]})}
    count = score("density.count", rec, cx.scenario, cx.out_dir)
    cats = score("density.categories", rec, cx.scenario, cx.out_dir)
    n, c = count.evidence.get("N"), cats.evidence.get("C")
    notes = list(count.evidence.get("notes") or [])
    details = {"t_s": DENSITY_AT_S, "visual_count": sample.get("visual_count"), "claimed_count": sample.get("claimed_count"),
               "verified_count": sample.get("verified_count"), "categories": sample.get("categories"), "notes": notes}
    if count.status == "pass" and cats.status == "pass":
        # the rubric counts what was verified; a claim that overshoots is said, not charged twice
        return CheckResult("density_sample", "pass", f"at {DENSITY_AT_S:g} s {n} verified moving objects in {c} "
                           f"categories (visual count {sample.get('visual_count')}, hook claim "
                           f"{sample.get('claimed_count')})" + (f"; note: {notes[0]}" if notes else ""),
                           details=details), now
    if count.status in ("untested", "review") or cats.status == "untested" and count.status != "fail":
        why = count.evidence.get("reason") or cats.evidence.get("reason") or "not measurable"
        if count.status == "pass":
            why = f"{n} moving objects counted, but {why}"
        return CheckResult("density_sample", "skip", why, details=details), now
    parts = []
    if count.status != "pass":
        parts.append(f"{n} verified moving objects at {DENSITY_AT_S:g} s (needs ≥ {count.evidence.get('full_at', 50):g})")
    if cats.status != "pass":
        parts.append(f"{c} categories (needs ≥ {cats.evidence.get('full_at', 4):g})")
    parts += notes[:2]
    return CheckResult("density_sample", "fail", "; ".join(parts), details=details), now


# ----------------------------------------------------------------- running them all
STEPS: list[tuple[str, float]] = [("single_file", 30), ("timeline", 120), ("autoplay_muted", 30),
                                  ("shops_hover", 90), ("pause_resume_replay", 60)]


STEP_OF = {"single_file": "single_file", "hook": "timeline", "no_reset_after_60s": "timeline",
           "density_sample": "timeline", "autoplay_muted": "autoplay_muted", "shops_hover": "shops_hover",
           "pause_resume_replay": "pause_resume_replay"}


async def _shops_only(cx: _Cx) -> None:
    """The shop list when the timeline step is not run (--only shops_hover)."""
    from .probes.shops.page import valid_shops

    dp = await cx.handle.open_page(cx.scenario, cx.demo.url, fake_clock=True)
    try:
        await _ff(dp, 0.5, await dp.now_s())
        r = await dp.hook.call("getShops")
    finally:
        await dp.close()
    if r.ok:
        cx.shops, probs = valid_shops(r.value)
        cx.shops_error = "; ".join(probs) or None
    else:
        cx.shops_error = f"getShops(): {r.error}"


async def run_checks(demo_path, scenario, out_dir: Path, progress: Optional[Callable[[str], None]] = None,
                     only: Optional[list[str]] = None) -> dict:
    """Run the checks (all, or `only` these) on one demo; returns {"checks": [CheckResult...],
    "passed", "duration_s", ...}."""
    names = [n for n in NAMES if not only or n in only]
    wanted = {STEP_OF[n] for n in names}
    if "shops_hover" in wanted and "timeline" not in wanted:
        wanted.add("shops_only")
    from playwright.async_api import async_playwright

    from .browser.server import DemoServer
    from .browser.session import BrowserHandle
    from .demo_file import load_demo

    demo = load_demo(demo_path)
    sc = check_scenario(scenario)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_all = time.monotonic()
    with DemoServer(demo.html) as server:
        demo.url = server.url
        async with async_playwright() as pw:
            handle = BrowserHandle(pw, offline=True)
            await handle.start()
            cx = _Cx(handle, demo, sc, out_dir)
            steps: dict[str, Callable[[], Awaitable[Any]]] = {
                "single_file": lambda: _single_file_collect(cx), "timeline": lambda: _timeline(cx),
                "autoplay_muted": lambda: _playback(cx, "autoplay"), "shops_hover": lambda: _shops_hover(cx),
                "pause_resume_replay": lambda: _playback(cx, "cycles"), "shops_only": lambda: _shops_only(cx)}
            try:
                for name, budget in [("shops_only", 30)] + STEPS:
                    if name not in wanted:
                        continue
                    if progress:
                        progress(name)
                    t = time.monotonic()
                    err = None
                    try:
                        out = await asyncio.wait_for(steps[name](), budget)
                    except asyncio.TimeoutError:
                        out, err = None, f"no result within {budget:g} s (the demo hangs or is too slow)"
                        await handle.restart()
                    except (DemoHang, DemoCrash) as e:
                        out, err = None, str(e)
                        await handle.restart()
                    except ProbeError as e:
                        out, err = None, str(e)
                    except Exception as e:          # the bench's own fault: say so, go on
                        out, err = None, f"check error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    el = time.monotonic() - t
                    targets = (["hook", "no_reset_after_60s", "density_sample"] if name == "timeline" else
                               [] if name == "shops_only" else [name])
                    if isinstance(out, CheckResult):
                        cx.results[name] = out
                    if err and name == "single_file":
                        cx.packaging_error = err
                    if err and name == "shops_only":
                        cx.shops_error = err
                    for tn in targets:
                        if err and tn not in cx.results or (err and name == "timeline" and cx.results.get(tn) is None):
                            cx.results[tn] = CheckResult(tn, "fail", err)
                        if cx.results.get(tn) is not None and not cx.results[tn].duration_s:
                            cx.results[tn].duration_s = el / len(targets)
                if "single_file" in wanted:
                    cx.results["single_file"] = _single_file_judge(cx)
            finally:
                await handle.kill()
    checks = [cx.results.get(n) or CheckResult(n, "skip", "not reached") for n in names]
    return {"demo": str(demo.path), "sha256": demo.sha256, "viewport": sc.viewport.label,
            "passed": all(c.status == "pass" for c in checks), "duration_s": round(time.monotonic() - t_all, 2),
            "checks": checks}


__all__ = ["CheckResult", "NAMES", "CHECK_SETTINGS", "check_scenario", "score", "from_item", "hook_problems",
           "read_hook", "run_checks"]
