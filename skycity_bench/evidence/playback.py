"""Evidence of probes/playback.py (items packaging.autoplay, packaging.pause_resume_replay):
real-time autoplay frames without input, and the pause/resume/replay cycles (fake clock);
and the autoplay rule on a watch of those frames (`scene_moves`), which the probe (whether
to run the click diagnostic's arms) and the autoplay scorer (the verdict) both apply."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Protocol

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class Change(Part):
    """Changed pixels between two frames (probes/_pixels.change_stats)."""

    changed_share: float
    changed_cells: int = Field(description="cells of a 16x9 grid with changed pixels")
    grid: list[Any]
    bbox: Optional[list[Any]] = None


class AutoplayV2(Part):
    frames: list[dict[str, float]] = Field(description="{t_s}: when each screenshot was asked for (real time)")
    changes: list[Change] = Field(description="each later frame against the first")
    union: Change = Field(description="all later frames' changes together")
    sound: Optional[dict[str, Any]] = Field(
        description="browser/js/media_probe.js: media, audio graphs, input listeners"
    )
    dialogs: list[Any]
    page_errors: list[Any]
    files: list[str] = Field(description="evidence frames (JPEG, for people)")
    after_click: Optional[Change] = Field(
        None, description="diagnostic only: change after a centre click (still scene)"
    )


class Travel(Part):
    """How far a change travelled from frame to frame (probes/_pixel_compare.travel_stats):
    a mover's way, about zero for what changes in place (a spinner, a caret)."""

    travel_px: int = Field(description="the place's extent minus the most one pair of frames changed in it")
    extent_px: int = Field(description="the longer side of that place's changed pixels")
    places: int = Field(description="places that changed")
    bbox: Optional[list[int]] = Field(description="[x, y, w, h] of the place that travelled furthest")


class Watch(Part):
    """Frames of one page watched in real time: what changed from the first, how far
    anything travelled."""

    frames: list[dict[str, float]] = Field(description="{t_s}: when each screenshot was asked for (real time)")
    union: Change = Field(description="every later frame's change against the first, together")
    travel: Travel
    files: list[str] = Field(default_factory=list, description="evidence frames (JPEG, for people)")


class Autoplay(Part):
    frames: list[dict[str, float]] = Field(description="{t_s}: when each screenshot was asked for (real time)")
    changes: list[Change] = Field(description="each later frame against the first")
    union: Change = Field(description="all later frames' changes together")
    travel: Travel = Field(description="how far a change travelled from frame to frame")
    sound: Optional[dict[str, Any]] = Field(
        description="browser/js/media_probe.js: media and audio graphs (and, in reports written before "
        "input_handlers, the input listeners it saw added)"
    )
    input_handlers: Optional[list[dict[str, Any]]] = Field(
        None,
        description="browser/input_handlers.py at the last frame: the key and click handlers in the browser's "
        "listener table, {on, type, target}; null in reports written before it",
    )
    dialogs: list[Any]
    page_errors: list[Any]
    files: list[str] = Field(description="evidence frames (JPEG, for people)")
    control: Optional[Watch] = Field(
        None, description="still scene only: the same page watched on without input, from the last frame"
    )
    clicked: Optional[Watch] = Field(
        None, description="still scene only: a fresh page, its centre clicked at the control's start, same offsets"
    )


class MovingRule(Protocol):
    """The autoplay rule's thresholds (the probe's probes.playback.moving_scene and the
    scorer's scorers.playback: one set of values in scenarios/skycity.yaml)."""

    min_changed_cells: int
    min_changed_share: float
    min_travel_px: int


def scene_moves(watch: Mapping[str, Any], rule: MovingRule) -> bool:
    """The autoplay rule on one watch of the page ({union, travel}: Autoplay, Watch): more
    than a spinner changed (pixels over `min_changed_share` of the viewport in at least
    `min_changed_cells` cells of the 16x9 grid: a spinner or a caret changes one or two), or
    a change travelled at least `min_travel_px` (a sparse scene's one mover; what changes in
    place travels about 0)."""
    u = watch["union"]
    wide = u["changed_cells"] >= rule.min_changed_cells and u["changed_share"] >= rule.min_changed_share
    return bool(wide or watch["travel"]["travel_px"] >= rule.min_travel_px)


class PauseResumeReplay(Part):
    hook_methods: list[str] = Field(description="hook methods the page has")
    hook_has_time: bool = Field(description="the hook's getState gives the demo's time")
    ways: dict[str, dict[str, Any]] = Field(
        description="'hook' and 'keyboard': each way's cycles (probes/_cycle.py), or {way, untested: reason, "
        "cause} (common/errors.py Cause; absent in evidence written before it)"
    )


class PlaybackEvidenceV2(Evidence):
    probe = "playback"
    evidence_version = "2"  # typed; the click diagnostic without a control arm

    viewport: list[int] = Field(description="[width, height] of this probe's pages")
    autoplay: AutoplayV2
    pause_resume_replay: PauseResumeReplay


class PlaybackEvidence(Evidence):
    probe = "playback"
    evidence_version = "3"  # 3: travel, and the control and clicked arms

    viewport: list[int] = Field(description="[width, height] of this probe's pages")
    autoplay: Autoplay
    pause_resume_replay: PauseResumeReplay
