"""packaging.autoplay (无需操作自动静音播放), from the playback probe's no-input frames and
its sound instrumentation (browser/js/media_probe.js).

  animates   between the first frame (t = 0) and the frames up to 3 s, pixels changed over
             at least `min_changed_share` of the viewport AND in at least `min_changed_cells`
             cells of a 16x9 grid (a spinner or a blinking caret changes one or two cells);
  audible    a media element that plays unmuted with volume > 0, or a running AudioContext
             with something connected to its destination (unless every node feeding the
             destination is a GainNode at 0).

  pass     animates and nothing is audible;
  partial  animates by itself but makes sound (plays, but not muted);
  fail     does not animate without input; when it started after the diagnostic click the
           reason says it waits for a click (click-to-start).

Also sets measurements.playback.autoplay (animates without input) and
measurements.playback.audible.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.evidence.playback import PlaybackEvidence
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings


@scorer_settings("playback")
class Settings(BaseModel):
    """The scenario's `scorers.playback`, shared with scorers/pause_resume_replay.py
    (reasons in scenarios/skycity.yaml)."""

    model_config = ConfigDict(extra="forbid")
    # autoplay: more than a spinner
    min_changed_cells: int = Field(ge=1, description="grid cells (16x9) that must change")
    min_changed_share: float = Field(ge=0, le=1, description="share of pixels that must change")
    # pause / resume / replay
    replay_min_ssim: float = Field(ge=0, le=1)
    replay_min_block_ssim: float = Field(ge=0, le=1)
    frozen_max_changed_share: float = Field(ge=0, le=1)
    paused_scene_moving_share: float = Field(ge=0, le=1)
    moving_min_changed_share: float = Field(ge=0, le=1)
    hook_time_tolerance_s: float = Field(ge=0)


def _audible(sound: dict[str, Any] | None) -> list[str]:
    if not sound:
        return []
    out = [
        f"<{m['tag']}> playing unmuted at volume {m['volume']:g} ({m['src'] or 'no src'})"
        for m in sound.get("media", [])
        if m.get("audible")
    ]
    out += [
        f"AudioContext running with {', '.join(a['feeds_destination'])} connected to its destination "
        f"({a['sources_started']} source(s) started)"
        for a in sound.get("audio", [])
        if a.get("audible")
    ]
    return out


@scorer("packaging.autoplay", probes=("playback",), accepts={"playback": ("2",)})
def autoplay(inp: ScoreInput) -> ItemScore:
    ev_: PlaybackEvidence = inp.evidence("playback")
    d = ev_.autoplay.model_dump(exclude_unset=True)
    s: Settings = inp.settings("playback")
    u = d["union"]
    animates = u["changed_cells"] >= s.min_changed_cells and u["changed_share"] >= s.min_changed_share
    heard = _audible(d.get("sound"))
    last_t = d["frames"][-1]["t_s"] if d.get("frames") else None
    ev = {
        "changed_share": u["changed_share"],
        "changed_cells": u["changed_cells"],
        "grid": u["grid"],
        "needs": {"changed_share": s.min_changed_share, "changed_cells": s.min_changed_cells},
        "frames_at_s": [f["t_s"] for f in d.get("frames", [])],
        "audible": heard,
        "sound": d.get("sound"),
        "files": list(d.get("files", [])),
    }
    m = {"playback.autoplay": animates, "playback.audible": bool(heard)}
    if not animates:
        clicked = d.get("after_click")
        started = bool(
            clicked
            and clicked["changed_cells"] >= s.min_changed_cells
            and clicked["changed_share"] >= s.min_changed_share
        )
        listeners = sorted({f"{x['target']}:{x['type']}" for x in (d.get("sound") or {}).get("input_listeners", [])})
        outcome = (
            Outcome.CLICK_TO_START if started else Outcome.STILL_CLICK_TRIED if clicked is not None else Outcome.STILL
        )
        ev.update({"started_after_click": started, "input_listeners": listeners})
    else:
        outcome = Outcome.AUDIBLE if heard else Outcome.PLAYS_MUTED
    ev["outcome"] = outcome.value
    ev["reason"] = reason(outcome, u, last_t, heard, s)
    return ItemScore(_STATUS[outcome], inp.objective(_STATUS[outcome]), ev, m)


class Outcome(str, Enum):
    """What the no-input frames and the media probe showed (codes; prose from reason())."""

    PLAYS_MUTED = "plays_muted"  # animates by itself, nothing audible
    AUDIBLE = "audible"  # animates by itself, but makes sound
    STILL = "still"  # did not animate (no click diagnostic)
    STILL_CLICK_TRIED = "still_click_tried"  # did not animate, a centre click did not start it
    CLICK_TO_START = "click_to_start"  # did not animate until a centre click


_STATUS = {
    Outcome.PLAYS_MUTED: "pass",
    Outcome.AUDIBLE: "partial",
    Outcome.STILL: "fail",
    Outcome.STILL_CLICK_TRIED: "fail",
    Outcome.CLICK_TO_START: "fail",
}


def reason(outcome: Outcome, u: dict[str, Any], last_t: float | None, heard: list[str], s: Settings) -> str:
    """The prose of an outcome, rendered from its code and figures."""
    if outcome is Outcome.PLAYS_MUTED:
        return (
            f"plays by itself without input ({u['changed_share']:.1%} of the pixels changed in "
            f"{u['changed_cells']} cells by {last_t} s) and nothing is audible"
        )
    if outcome is Outcome.AUDIBLE:
        return "plays by itself, but not muted: " + "; ".join(heard)
    why = (
        f"without any input the scene did not animate by {last_t} s: {u['changed_share']:.2%} of the pixels "
        f"changed in {u['changed_cells']} grid cell(s) (needs ≥ {s.min_changed_share:.2%} in ≥ "
        f"{s.min_changed_cells} cells: more than a spinner)"
    )
    if outcome is Outcome.CLICK_TO_START:
        why += "; it started after a click on the centre: the demo waits for a click (click-to-start)"
    elif outcome is Outcome.STILL_CLICK_TRIED:
        why += "; a click on the centre did not start it either"
    return why
