"""`skycity-bench check DEMO.html`: spec compliance in well under a minute, for CI.

A profile on the same runner as `run` and the batch (runner.execute): the same browser
launch, budgets, restarts, memory watchdog, network log and report.json (in --out), the
same scorers. What makes it a check is scenarios/check.yaml:

- `overlay`: the scenario with shorter settings for the probes it runs (packaging,
  playback); no 60 s real-time playback, everything on the fake clock except the playback
  probe's 2 s autoplay look;
- its own collection steps (check_steps.py): one fast-forwarded tour to 64 s (hook reads,
  reset frames, one density frame pair) and the shops probe's hover phase;
- `checks`: for each of the seven checks, the steps it needs and the items (or, for the hook
  contract and the reset, the tour's raw figures) that decide it.

Thresholds come from the scenario (the scorers' sections) and targets from the rubric;
check.py holds none. A check ends as pass, fail (with its reason) or skip (what could not be
decided and why; a skip is not a pass).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skycity_bench.browser.hook import HookCall
from skycity_bench.common.errors import UserError

CHECK_PROFILE = Path(__file__).resolve().parents[2] / "scenarios" / "check.yaml"
OWN_STEPS = ("check_tour", "density", "shops")  # check_steps.py, in this run order


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Tour(_Strict):
    ff_step_ms: int = Field(ge=1, le=1000)
    hook_at_s: float = Field(ge=0)
    opening_s: list[float] = Field(min_length=1)
    density_at_s: float = Field(gt=0)
    tour_end_s: float = Field(gt=0)
    after_s: list[float] = Field(min_length=1)
    stood_still_s: float = Field(ge=0)
    back_to_start_s: float = Field(ge=0)


class CheckSpec(_Strict):
    steps: list[str] = Field(min_length=1)
    items: list[str] = Field(default_factory=list)
    evidence: Optional[str] = Field(None, pattern="^(hook|reset)$")

    @model_validator(mode="after")
    def _decided(self) -> CheckSpec:
        if bool(self.items) == bool(self.evidence):
            raise ValueError("a check is decided by items or by evidence (hook, reset), one of the two")
        return self


class CheckConfig(_Strict):
    overlay: dict[str, Any] = Field(default_factory=dict)
    tour: Tour
    budgets_s: dict[str, float]
    checks: dict[str, CheckSpec]


def load_check_config(path: Path = CHECK_PROFILE) -> CheckConfig:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        cfg = CheckConfig.model_validate(raw)
    except (OSError, yaml.YAMLError) as e:
        raise UserError(f"{path}: not a readable check profile: {e}") from None
    except ValidationError as e:
        first = e.errors()[0]
        raise UserError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    from skycity_bench.probes import registry

    for name, spec in cfg.checks.items():
        for step in spec.steps:
            if step not in OWN_STEPS and step not in registry.names():
                raise UserError(f"{path}: checks.{name}.steps: no such step {step!r}")
    missing = [s for s in OWN_STEPS if s not in cfg.budgets_s]
    if missing:
        raise UserError(f"{path}: budgets_s: no budget for {', '.join(missing)}")
    return cfg


def names() -> list[str]:
    return list(load_check_config().checks)


@dataclasses.dataclass
class CheckResult:
    name: str
    status: str  # pass | fail | skip
    reason: str = ""
    duration_s: float = 0.0
    details: dict = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "status": self.status,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 2),
            "details": self.details,
        }


# ----------------------------------------------------------------- the profile
def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out.get(k) or {}, v) if isinstance(v, dict) else v
    return out


def check_scenario(scenario, cfg: CheckConfig):
    """The scenario with the check's overlay; the playback probe's pages at the check's viewport."""
    data = _merge(scenario.model_dump(), cfg.overlay)
    data["probes"]["playback"] = {
        **(data["probes"].get("playback") or {}),
        "width": scenario.viewport.width,
        "height": scenario.viewport.height,
    }
    try:
        return type(scenario).model_validate(data)
    except ValidationError as e:
        raise UserError(f"{CHECK_PROFILE}: overlay: {e.errors()[0]['msg']}") from None


def check_profile(cfg: CheckConfig, wanted: list[str], note: Optional[Callable[[str], None]] = None):
    """The runner profile for these checks: the registry probes and own steps they need
    (as the profile's steps, each announced through `note` when it starts)."""
    from skycity_bench.check import check_steps
    from skycity_bench.probes import registry
    from skycity_bench.running.runner import Profile

    steps = {s for n in wanted for s in cfg.checks[n].steps}
    if "density" in steps:
        steps.add("check_tour")
    b = cfg.budgets_s
    own = {
        "check_tour": lambda: check_steps.tour_step(cfg.tour, b["check_tour"], order=35),
        "density": lambda: check_steps.density_step(b["density"], order=36),
        "shops": lambda: check_steps.shops_step(cfg.tour, b["shops"], order=40),
    }
    specs = [own[s]() for s in OWN_STEPS if s in steps] + [registry.get(p) for p in sorted(steps - set(own))]
    if note:
        specs = [_announced(s, note) for s in specs]
    items = tuple(dict.fromkeys(i for n in wanted for i in cfg.checks[n].items))
    return Profile(name="check", probes=(), steps=tuple(specs), calibrate=False, items=items)


def _announced(spec, note):
    async def collect(ctx):
        note(spec.name)
        return await spec.collect(ctx)

    return dataclasses.replace(spec, collect=collect)


# ----------------------------------------------------------------- the verdicts
def from_items(name: str, items: list) -> CheckResult:
    """pass → pass; partial/fail → fail with the scorer's reason; untested/review → skip.
    Several items: the first that does not pass decides."""
    res = next((it for it in items if it.status != "pass"), items[0])
    ev = dict(res.evidence)
    why = str(ev.get("reason") or ev.get("note") or "; ".join(map(str, ev.get("failed", {}).items())) or res.status)
    status = {"pass": "pass", "partial": "fail", "fail": "fail"}.get(res.status, "skip")
    if status == "skip":
        why = f"{res.status}: {why}"
    return CheckResult(
        name, status, why, details={"item_status": res.status, "points": res.points, "evidence": _trim(ev)}
    )


def _trim(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _trim(x) for k, x in list(v.items())[:40]}
    if isinstance(v, list):
        return [_trim(x) for x in v[:20]]
    return v[:500] if isinstance(v, str) else v


def setting(scenario, key: str, *sections: str):
    """A value from the scenario: the scorers' section first, then the probe section of the
    same name. Missing: a usage error, no fallback."""
    for part in ("scorers", "probes"):
        for sec in sections:
            v = (getattr(scenario, part, None) or {}).get(sec, {}) or {}
            if key in v:
                return v[key]
    raise UserError(f"scenario: no {key} in scorers/probes {', '.join(sections)} (the check needs it)")


STATE_KEYS = {"time": (int, float), "phase": (int,), "paused": (bool,), "ended": (bool,)}
DESCRIBE_VERSION = 1  # test-hook.md: window.skyCityTest.version
PHASES = (1, 2, 3, 4)  # test-hook.md: getState().phase
TRIGGERS = ("hover", "touch", "auto")


def hook_problems(
    desc, calls: dict, viewport: tuple[int, int], methods: dict[str, str], *, expected_shops: int
) -> list[str]:
    """What is wrong with the hook (test-hook.md), from describe() and one call of each getter."""
    if not desc.ok:
        return [f"window.skyCityTest: {desc.error}"]
    d = desc.value if isinstance(desc.value, dict) else {}
    out = []
    if d.get("version") != DESCRIBE_VERSION:
        out.append(f"version is {d.get('version')!r}, expected {DESCRIBE_VERSION}")
    if not isinstance(d.get("cityName"), str) or not d.get("cityName", "").strip():
        out.append("cityName is missing or not a non-empty string")
    missing = [m for m, real in methods.items() if d.get(real) != "function"]
    if missing:
        out.append(f"missing methods: {', '.join(missing)}")
    checks = {
        "getState": _state_problems,
        "getShops": lambda call: _shops_problems(call, expected_shops),
        "getDynamicObjects": _objects_problems,
        "getActiveCard": _card_problems,
    }
    for name, check in checks.items():
        call = calls.get(name)
        if call is None:
            continue
        out += [f"{name}(): {call.error}"] if not call.ok else check(call)
    return out


def _state_problems(st) -> list[str]:
    if not isinstance(st.value, dict):
        return [f"getState() returned {type(st.value).__name__}, not an object"]
    out = []
    for k, types in STATE_KEYS.items():
        v = st.value.get(k)
        if isinstance(v, bool) and bool not in types or not isinstance(v, types):
            out.append(f"getState().{k} is {v!r}")
    if isinstance(st.value.get("phase"), int) and st.value["phase"] not in PHASES:
        out.append(f"getState().phase is {st.value['phase']}, not {PHASES[0]}..{PHASES[-1]}")
    return out


def _shops_problems(sh, expected_shops: int) -> list[str]:
    from skycity_bench.probes.shops.shop_page import valid_shops

    shops, probs = valid_shops(sh.value)
    out = [f"getShops(): {p}" for p in probs[:5]]
    if len(shops) != expected_shops:
        out.append(f"getShops() lists {len(shops)} usable shops, not {expected_shops}")
    return out


def _objects_problems(obj) -> list[str]:
    if not isinstance(obj.value, list):
        return [f"getDynamicObjects() returned {type(obj.value).__name__}, not a list"]
    bad = [i for i, o in enumerate(obj.value) if not _object_ok(o)]
    if not bad:
        return []
    return [
        f"getDynamicObjects(): {len(bad)} of {len(obj.value)} entries lack id/category/x/y/w/h/visible (first: #{bad[0]})"
    ]


def _card_problems(ac) -> list[str]:
    if ac.value is None or (
        isinstance(ac.value, dict) and isinstance(ac.value.get("shopId"), str) and ac.value.get("trigger") in TRIGGERS
    ):
        return []
    return [f"getActiveCard() returned {str(ac.value)[:80]}, expected null or {{shopId, trigger}}"]


def _object_ok(o) -> bool:
    if not isinstance(o, dict) or not isinstance(o.get("id"), str) or not isinstance(o.get("category"), str):
        return False
    nums = [o.get(k) for k in ("x", "y", "w", "h")]
    return all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in nums
    ) and isinstance(o.get("visible"), bool)


def hook_verdict(tour: dict, scenario) -> CheckResult:
    vp, methods = scenario.viewport, scenario.hook.methods
    n = setting(scenario, "expected_shops", "shops")
    seen = []
    for r in tour["hook"]:
        calls = {m: HookCall(**c) for m, c in r["calls"].items()}
        seen.append(
            (
                r["t_s"],
                hook_problems(HookCall(**r["describe"]), calls, (vp.width, vp.height), methods, expected_shops=n),
            )
        )
    bad = [(t, p) for t, p in seen if p]
    details = {"checked_at_s": [t for t, _ in seen], "problems": {f"{t:g}": p for t, p in bad}}
    if not bad:
        return CheckResult(
            "hook", "pass", "present and well-formed at " + ", ".join(f"{t:g} s" for t, _ in seen), details=details
        )
    t, p = bad[0]
    first_ok = not seen[0][1]
    why = (f"at {t:g} s: " if first_ok or t != seen[0][0] else "") + "; ".join(p[:4])
    if first_ok:
        why = "the hook changed mid-run: " + why
    return CheckResult("hook", "fail", why, details=details)


def reset_verdict(tour: dict, scenario, cfg: CheckConfig) -> CheckResult:
    from skycity_bench.analysis.motion import reset_check

    th = scenario.scorer_settings("camera")  # the camera scorer's own reset rule
    match, depart = th.reset_match, th.reset_depart
    post, tc = tour["post"], cfg.tour
    r = reset_check(post, match=match, depart=depart)
    hook_t, t_open = tour.get("hook_time_end"), tour.get("hook_time_opening")
    details = {"frames": post, "match": match, "depart": depart, "hook_time_at_end": hook_t}
    end_s = tc.after_s[-1]
    name = "no_reset_after_60s"
    if r["reset"]:
        return CheckResult(
            name,
            "fail",
            f"at {r['first_s']:g} s the picture is back at the opening (matches the "
            f"frame of {r['matches_opening_at_s']:g} s): the demo resets after 60 s",
            details=details,
        )
    if hook_t is not None:
        if t_open is not None and abs(hook_t - t_open) < tc.stood_still_s:
            return CheckResult(
                name,
                "skip",
                f"the demo's own clock stood at {hook_t:.2f} s from {tc.opening_s[-1]:g} s "
                f"to {end_s:g} s: it never played, so a reset cannot be told",
                details=details,
            )
        if hook_t < tc.back_to_start_s:
            return CheckResult(
                name,
                "fail",
                f"the hook's own time is {hook_t:.2f} s at bench time {end_s:g} s: the demo went back to its start",
                details=details,
            )
        if hook_t < tc.tour_end_s:
            return CheckResult(
                name,
                "skip",
                f"the demo's own clock reached only {hook_t:.1f} s by bench time "
                f"{end_s:g} s (it caps its frame step below {tc.ff_step_ms} ms): the end of its tour "
                "was not reached by the fast-forward",
                details=details,
            )
    return CheckResult(
        name,
        "pass",
        "after 60 s the picture stays away from the opening "
        f"(closest distance {min(p['d_open'] for p in post):.3f} > {match:g})",
        details=details,
    )


def density_verdict(count, cats, sample: dict, at_s: float) -> CheckResult:
    n, c = count.evidence.get("N"), cats.evidence.get("C")
    notes = list(count.evidence.get("notes") or [])
    details = {
        "t_s": at_s,
        "visual_count": sample.get("visual_count"),
        "claimed_count": sample.get("claimed_count"),
        "verified_count": sample.get("verified_count"),
        "categories": sample.get("categories"),
        "notes": notes,
    }
    name = "density_sample"
    if count.status == "pass" and cats.status == "pass":
        # the rubric counts what was verified; a claim that overshoots is said, not charged twice
        return CheckResult(
            name,
            "pass",
            f"at {at_s:g} s {n} verified moving objects in {c} categories (visual count "
            f"{sample.get('visual_count')}, hook claim {sample.get('claimed_count')})"
            + (f"; note: {notes[0]}" if notes else ""),
            details=details,
        )
    if count.status in ("untested", "review") or cats.status == "untested" and count.status != "fail":
        why = count.evidence.get("reason") or cats.evidence.get("reason") or "not measurable"
        if count.status == "pass":
            why = f"{n} moving objects counted, but {why}"
        return CheckResult(name, "skip", why, details=details)
    parts = []
    if count.status != "pass":
        parts.append(f"{n} verified moving objects at {at_s:g} s (needs ≥ {count.evidence['full_at']:g})")
    if cats.status != "pass":
        parts.append(f"{c} categories (needs ≥ {cats.evidence['full_at']:g})")
    return CheckResult(name, "fail", "; ".join(parts + notes[:2]), details=details)


def verdict(name: str, spec: CheckSpec, report, scenario, cfg: CheckConfig) -> CheckResult:
    """The check's result from the scored report: a step that could not collect fails it
    with its error; else its items, or its evidence, decide."""
    recs = report.probes
    for step in spec.steps:
        rec = recs.get(step)
        if rec is None:
            return CheckResult(name, "skip", f"step {step} did not run")
        if rec.status != "ok":
            return CheckResult(name, "fail", rec.error or f"step {step} failed")
    if spec.evidence == "hook":
        return hook_verdict(recs["check_tour"].data, scenario)
    if spec.evidence == "reset":
        return reset_verdict(recs["check_tour"].data, scenario, cfg)
    items = [report.items[i] for i in spec.items if i in report.items]
    if len(items) != len(spec.items):
        return CheckResult(name, "skip", "no scorer for this item in this bench version")
    if spec.items == ["density.count", "density.categories"]:
        return density_verdict(items[0], items[1], recs["check_tour"].data["density_sample"], cfg.tour.density_at_s)
    return from_items(name, items)


# ----------------------------------------------------------------- running them
async def run_checks(
    demo_path,
    scenario,
    out_dir: Path,
    progress: Optional[Callable[[str], None]] = None,
    only: Optional[list[str]] = None,
    config: Path = CHECK_PROFILE,
) -> dict:
    """Run the checks (all, or `only` these) on one demo through runner.execute; returns
    {"checks": [CheckResult...], "passed", "duration_s", "report", ...}."""
    from skycity_bench.running.runner import execute

    cfg = load_check_config(config)
    wanted = [n for n in cfg.checks if not only or n in only]
    sc = check_scenario(scenario, cfg)
    t_all = time.monotonic()
    report = await execute(demo_path, sc, check_profile(cfg, wanted, progress), Path(out_dir))
    checks = []
    for n in wanted:
        spec = cfg.checks[n]
        res = verdict(n, spec, report, sc, cfg)
        # a step shared by several checks counts its time once, shared among them
        share = {s: sum(1 for m in wanted if s in cfg.checks[m].steps) for s in spec.steps}
        res.duration_s = sum((report.probes[s].duration_s if s in report.probes else 0) / share[s] for s in spec.steps)
        checks.append(res)
    return {
        "demo": str(demo_path),
        "sha256": report.candidate.sha256,
        "viewport": sc.viewport.label,
        "passed": all(c.status == "pass" for c in checks),
        "duration_s": round(time.monotonic() - t_all, 2),
        "checks": checks,
        "report": str(Path(out_dir) / "report.json"),
    }


__all__ = [
    "CheckResult",
    "CheckConfig",
    "load_check_config",
    "names",
    "check_scenario",
    "check_profile",
    "hook_problems",
    "run_checks",
]
