"""packaging.autoplay (无需操作自动静音播放), from the playback probe's no-input frames and
its sound instrumentation (browser/js/media_probe.js).

  moves      between the first frame (t = 0) and the frames up to 3 s, pixels changed over
             at least `min_changed_share` of the viewport AND in at least `min_changed_cells`
             cells of a 16x9 grid (a spinner or a blinking caret changes one or two cells),
             OR a change travelled at least `min_travel_px` from frame to frame: a sparse
             scene's one car entering late travels, a spinner, a caret or a ticking counter
             changes in place (probes/_pixel_compare.travel_stats). The rule is
             evidence/playback.py scene_moves, the one the probe applies too;
  audible    a media element that plays unmuted with volume > 0, or a running AudioContext
             with something connected to its destination (unless every node feeding the
             destination is a GainNode at 0).

  pass     moves and nothing is audible;
  partial  moves by itself but makes sound (plays, but not muted);
  fail     does not move without input. Why is said only from a comparison that can tell:
           the probe's two arms of the same length after the no-input frames, the same page
           watched on without input (control) and a fresh page clicked at the centre. It
           waits for a click (click-to-start) when the clicked arm moved and the control did
           not; it starts late by itself when the control moved; else nothing started it.

Also sets measurements.playback.autoplay (moves without input) and
measurements.playback.audible.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.evidence.playback import PlaybackEvidence, scene_moves
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings


@scorer_settings("playback")
class Settings(BaseModel):
    """The scenario's `scorers.playback`, shared with scorers/pause_resume_replay.py
    (reasons in scenarios/skycity.yaml)."""

    model_config = ConfigDict(extra="forbid")
    # autoplay: more than a spinner
    min_changed_cells: int = Field(ge=1, description="grid cells (16x9) that must change")
    min_changed_share: float = Field(ge=0, le=1, description="share of pixels that must change")
    min_travel_px: int = Field(ge=1, description="or: a change travelled this far from frame to frame (CSS px)")
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


@scorer("packaging.autoplay", probes=("playback",), accepts={"playback": ("3",)})
def autoplay(inp: ScoreInput) -> ItemScore:
    ev_: PlaybackEvidence = inp.evidence("playback")
    d = ev_.autoplay.model_dump(exclude_unset=True)
    s: Settings = inp.settings("playback")
    u = d["union"]
    animates = scene_moves(d, s)
    heard = _audible(d.get("sound"))
    last_t = d["frames"][-1]["t_s"] if d.get("frames") else None
    ev = {
        "changed_share": u["changed_share"],
        "changed_cells": u["changed_cells"],
        "grid": u["grid"],
        "travel_px": d["travel"]["travel_px"],
        "needs": {
            "changed_share": s.min_changed_share,
            "changed_cells": s.min_changed_cells,
            "or_travel_px": s.min_travel_px,
        },
        "frames_at_s": [f["t_s"] for f in d.get("frames", [])],
        "audible": heard,
        "sound": d.get("sound"),
        "files": list(d.get("files", [])) + list((d.get("clicked") or {}).get("files", [])),
    }
    m = {"playback.autoplay": animates, "playback.audible": bool(heard)}
    if animates:
        outcome = Outcome.AUDIBLE if heard else Outcome.PLAYS_MUTED
    else:
        outcome = _still_outcome(d, s)
        listeners = _listeners(d)
        ev.update({"started_after_click": outcome is Outcome.CLICK_TO_START, "input_listeners": listeners})
        for arm in ("control", "clicked"):
            if d.get(arm):
                ev[arm] = {"moved": scene_moves(d[arm], s), **_watch_figures(d[arm])}
    ev["outcome"] = outcome.value
    ev["reason"] = reason(outcome, d, last_t, heard, s)
    return ItemScore(_STATUS[outcome], inp.objective(_STATUS[outcome]), ev, m)


def _listeners(d: dict[str, Any]) -> list[str]:
    """`target:type` of the page's key and click handlers: the browser's listener table
    (input_handlers); in reports written before it, what media_probe.js saw added."""
    found = d.get("input_handlers")
    if found is None:
        found = (d.get("sound") or {}).get("input_listeners", [])
    return sorted({f"{x['target']}:{x['type']}" for x in found})


def _still_outcome(d: dict[str, Any], s: Settings) -> Outcome:
    """Why a scene that did not move by itself stood still, from the two arms when the probe
    ran them: only the click made the difference, or the scene began by itself."""
    control, clicked = d.get("control"), d.get("clicked")
    if not control or not clicked:
        return Outcome.STILL
    if scene_moves(control, s):
        return Outcome.LATE_START
    return Outcome.CLICK_TO_START if scene_moves(clicked, s) else Outcome.STILL_CLICK_TRIED


def _watch_figures(w: dict[str, Any]) -> dict[str, Any]:
    u = w["union"]
    return {
        "from_s": w["frames"][0]["t_s"],
        "to_s": w["frames"][-1]["t_s"],
        "changed_share": u["changed_share"],
        "changed_cells": u["changed_cells"],
        "travel_px": w["travel"]["travel_px"],
    }


class Outcome(str, Enum):
    """What the no-input frames and the media probe showed (codes; prose from reason())."""

    PLAYS_MUTED = "plays_muted"  # animates by itself, nothing audible
    AUDIBLE = "audible"  # animates by itself, but makes sound
    STILL = "still"  # did not animate (no arms run)
    STILL_CLICK_TRIED = "still_click_tried"  # did not animate, neither arm moved
    CLICK_TO_START = "click_to_start"  # only the clicked arm moved
    LATE_START = "late_start"  # the no-input control moved: it starts by itself, after the look


_STATUS = {
    Outcome.PLAYS_MUTED: "pass",
    Outcome.AUDIBLE: "partial",
    Outcome.STILL: "fail",
    Outcome.STILL_CLICK_TRIED: "fail",
    Outcome.CLICK_TO_START: "fail",
    Outcome.LATE_START: "fail",
}


def reason(outcome: Outcome, d: dict[str, Any], last_t: float | None, heard: list[str], s: Settings) -> str:
    """The prose of an outcome, rendered from its code and figures."""
    u, tr = d["union"], d["travel"]["travel_px"]
    if outcome is Outcome.PLAYS_MUTED:
        how = (
            f"{u['changed_share']:.1%} of the pixels changed in {u['changed_cells']} cells"
            if u["changed_cells"] >= s.min_changed_cells and u["changed_share"] >= s.min_changed_share
            else f"something travelled {tr} px"
        )
        return f"plays by itself without input ({how} by {last_t} s) and nothing is audible"
    if outcome is Outcome.AUDIBLE:
        return "plays by itself, but not muted: " + "; ".join(heard)
    why = (
        f"without any input the scene did not animate by {last_t} s: {u['changed_share']:.2%} of the pixels "
        f"changed in {u['changed_cells']} grid cell(s) and nothing travelled more than {tr} px (needs ≥ "
        f"{s.min_changed_share:.2%} in ≥ {s.min_changed_cells} cells, or a change travelling ≥ {s.min_travel_px} px: "
        "more than a spinner)"
    )
    c = d.get("clicked") or {}
    to = c.get("frames", [{}])[-1].get("t_s")
    if outcome is Outcome.CLICK_TO_START:
        why += (
            f"; a page clicked at the centre at {last_t} s moved by {to} s while the same page left alone did not: "
            "the demo waits for a click (click-to-start)"
        )
    elif outcome is Outcome.LATE_START:
        why += "; left alone it began to move afterwards by itself (a late start, not click-to-start)"
    elif outcome is Outcome.STILL_CLICK_TRIED:
        why += f"; a click on the centre did not start it either (watched to {to} s)"
    return why
