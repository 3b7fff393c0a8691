"""packaging.pause_resume_replay (暂停、继续与重播可用且可重复), from the playback probe's
cycles (probes/_cycle.py), each way (hook, keyboard) judged on its own:

  pause   ok when the frames `pause_hold_s` apart are identical (changed share ≤
          `frozen_max_changed_share`: camera AND objects stopped) and, where the hook has
          getState, its time did not move by more than `hook_time_tolerance_s`;
  resume  ok when the pause before it held, the frames move again (changed share ≥
          `moving_min_changed_share`) and the hook's time (where readable) advanced;
  replay  ok when the frames at replay + each first-play time match the first play's
          (SSIM ≥ `replay_min_ssim` and every block of the frame ≥ `replay_min_block_ssim`,
          best of the frame at that time and one either side).
Each of the three is checked in every cycle (two by default: "可重复").

A way passes when every check of every cycle is ok, is partial when some are, fails when
none is (also when the scene did not move at all during the first play: nothing to pause).
The item takes the best way that was tried: the rubric asks that pause, resume and replay
be available and repeatable, and one way that works makes them so; the other way's
failures stay in the evidence. No way tried (no hook methods, keyboard not enabled):
untested with the reasons.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from skycity_bench.common.errors import Cause, combined
from skycity_bench.evidence.playback import PlaybackEvidence
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer
from skycity_bench.judging.scorers.autoplay import Settings

_RANK = {"pass": 2, "partial": 1, "fail": 0}


class Finding(str, Enum):
    """Why a check of a cycle did not hold (codes; the prose is rendered by `say`)."""

    NOT_MOVING = "scene_not_moving"  # nothing moved during the first play
    PAUSE_OBJECTS_MOVE = "pause_stops_only_camera"  # 暂停只停止镜头
    PAUSE_SCENE_MOVES = "pause_did_not_stop"
    PAUSE_HOOK_TIME_RAN = "pause_hook_time_ran_on"
    RESUME_UNVERIFIABLE = "resume_after_failed_pause"
    RESUME_NO_MOTION = "resume_frames_still"
    RESUME_HOOK_TIME_STUCK = "resume_hook_time_stuck"
    REPLAY_DIFFERS = "replay_differs"


# A check that did not hold: its code and the figures its prose names.
_Found = tuple[Finding, dict[str, Any]]


def say(code: Finding, f: dict[str, Any], s: Settings) -> str:
    """The prose of a finding, from its code and figures."""
    if code is Finding.NOT_MOVING:
        return (
            f"the scene did not move during the first play ({f['changed_share']:.3%} changed between "
            f"{f['from_s']:g} s and {f['to_s']:g} s): nothing to pause or replay"
        )
    if code is Finding.PAUSE_OBJECTS_MOVE:
        return (
            f"while paused {f['changed_share']:.2%} of the picture kept changing over the hold: objects moved "
            "on while the view stood still (暂停只停止镜头)"
        )
    if code is Finding.PAUSE_SCENE_MOVES:
        return f"while paused {f['changed_share']:.1%} of the picture kept changing: the scene did not stop"
    if code is Finding.PAUSE_HOOK_TIME_RAN:
        return f"frames froze, but the hook's time ran on while paused ({f['t0']:.3f} → {f['t1']:.3f} s)"
    if code is Finding.RESUME_UNVERIFIABLE:
        return "resume not verifiable: the pause before it did not hold"
    if code is Finding.RESUME_NO_MOTION:
        return f"after resume the frames did not move ({f['changed_share']:.3%} changed)"
    if code is Finding.RESUME_HOOK_TIME_STUCK:
        return f"frames moved, but the hook's time did not advance after resume ({f['t1']:.3f} → {f['t2']:.3f} s)"
    return "; ".join(
        f"replay + {r['t_s']:g} s differs from the first play at {r['t_s']:g} s (SSIM "
        f"{r['ssim']:.3f}, worst block {r['worst_block']:.3f}; needs ≥ {s.replay_min_ssim:g} / "
        f"≥ {s.replay_min_block_ssim:g}): the replay did not reset the scene"
        for r in f["bad"]
    )


def _pause(c: dict[str, Any], s: Settings) -> tuple[bool, _Found | None]:
    p = c["pause"]
    if p["changed_share"] > s.frozen_max_changed_share:
        if p["changed_share"] < s.paused_scene_moving_share:
            return False, (Finding.PAUSE_OBJECTS_MOVE, {"changed_share": p["changed_share"]})
        return False, (Finding.PAUSE_SCENE_MOVES, {"changed_share": p["changed_share"]})
    t_before, t0, t1 = p["hook_time"]
    if t0 is not None and t1 is not None and abs(t1 - t0) > s.hook_time_tolerance_s:
        return False, (Finding.PAUSE_HOOK_TIME_RAN, {"t0": t0, "t1": t1})
    return True, None


def _resume(c: dict[str, Any], s: Settings, paused_ok: bool) -> tuple[bool, _Found | None]:
    r = c["resume"]
    if not paused_ok:
        return False, (Finding.RESUME_UNVERIFIABLE, {})
    if r["changed_share"] < s.moving_min_changed_share:
        return False, (Finding.RESUME_NO_MOTION, {"changed_share": r["changed_share"]})
    t1, t2 = r["hook_time"]
    if t1 is not None and t2 is not None and t2 - t1 <= s.hook_time_tolerance_s:
        return False, (Finding.RESUME_HOOK_TIME_STUCK, {"t1": t1, "t2": t2})
    return True, None


def _replay(c: dict[str, Any], s: Settings) -> tuple[bool, _Found | None]:
    bad = [r for r in c["replay"] if r["ssim"] < s.replay_min_ssim or r["worst_block"] < s.replay_min_block_ssim]
    if not bad:
        return True, None
    return False, (Finding.REPLAY_DIFFERS, {"bad": bad})


def judge_way(w: dict[str, Any], s: Settings) -> dict[str, Any]:
    """{status, checks: [{cycle, pause, resume, replay}], failures: [...]} for one way; a way
    the probe could not try: {status: untested, reason, cause}."""
    if "untested" in w:
        # the probe says why (evidence written before it did: not taken for the page's)
        return {"status": "untested", "reason": w["untested"], "cause": Cause(w.get("cause") or Cause.BENCH).value}
    base = w["first_play_change"]
    if base["changed_share"] < s.moving_min_changed_share:
        fig = {
            "changed_share": base["changed_share"],
            "from_s": w["first_play_times_s"][0],
            "to_s": w["first_play_times_s"][-1],
        }
        return {
            "status": "fail",
            "checks": [],
            "codes": [Finding.NOT_MOVING.value],
            "failures": [say(Finding.NOT_MOVING, fig, s)],
        }
    checks, failures, codes = [], [], []
    for k, c in enumerate(w["cycles"], 1):
        p_ok, p_why = _pause(c, s)
        r_ok, r_why = _resume(c, s, p_ok)
        q_ok, q_why = _replay(c, s)
        checks.append(
            {
                "cycle": k,
                "pause": p_ok,
                "resume": r_ok,
                "replay": q_ok,
                "pause_changed_share": c["pause"]["changed_share"],
                "resume_changed_share": c["resume"]["changed_share"],
                "replay_ssim": [r["ssim"] for r in c["replay"]],
                "replay_worst_block": [r["worst_block"] for r in c["replay"]],
            }
        )
        for found in (p_why, r_why, q_why):
            if found:
                codes.append(found[0].value)
                failures.append(f"cycle {k}: {say(found[0], found[1], s)}")
    flags = [v for ch in checks for v in (ch["pause"], ch["resume"], ch["replay"])]
    status = "pass" if all(flags) else "partial" if any(flags) else "fail"
    out: dict[str, Any] = {"status": status, "checks": checks, "codes": sorted(set(codes)), "failures": failures}
    if w.get("hook_errors"):
        out["hook_errors"] = w["hook_errors"]
    return out


@scorer("packaging.pause_resume_replay", probes=("playback",), accepts={"playback": ("2", "3")})
def pause_resume_replay(inp: ScoreInput) -> ItemScore:
    ev_: PlaybackEvidence = inp.evidence("playback")
    d = ev_.pause_resume_replay.model_dump()
    s: Settings = inp.settings("playback")
    verdicts = {name: judge_way(w, s) for name, w in d["ways"].items()}
    tried = {n: v for n, v in verdicts.items() if v["status"] != "untested"}
    files = [f for w in d["ways"].values() for f in w.get("pause_frames", [])]
    files += [
        f for w in d["ways"].values() for c in w.get("cycles", []) for r in c["replay"] for f in r.get("files", [])
    ]
    ev: dict[str, Any] = {"ways": verdicts, "hook_methods": d.get("hook_methods"), "files": files}
    if not tried:
        ev["reason"] = "not tried: " + "; ".join(f"{n}: {v['reason']}" for n, v in verdicts.items())
        return ItemScore("untested", None, ev, cause=combined([Cause(v["cause"]) for v in verdicts.values()]))
    best = max(tried, key=lambda n: (_RANK[tried[n]["status"]], n == "hook"))
    status = tried[best]["status"]
    ev["decided_by"] = best
    if status == "pass":
        ev["reason"] = (
            f"by {best}: pause froze every frame, resume moved on and replay matched the first play, "
            f"in each of {len(tried[best]['checks'])} cycles"
        )
    else:
        ev["reason"] = f"by {best}: " + "; ".join(tried[best]["failures"][:4])
    others = [f"{n}: {v['status']}" for n, v in verdicts.items() if n != best]
    if others:
        ev["other_ways"] = others
    return ItemScore(status, inp.objective(status), ev)
