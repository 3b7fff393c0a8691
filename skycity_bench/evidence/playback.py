"""Evidence of probes/playback.py (items packaging.autoplay, packaging.pause_resume_replay):
real-time autoplay frames without input, and the pause/resume/replay cycles (fake clock)."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class Change(Part):
    """Changed pixels between two frames (probes/_pixels.change_stats)."""

    changed_share: float
    changed_cells: int = Field(description="cells of a 16x9 grid with changed pixels")
    grid: list[Any]
    bbox: Optional[list[Any]] = None


class Autoplay(Part):
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


class PauseResumeReplay(Part):
    hook_methods: list[str] = Field(description="hook methods the page has")
    hook_has_time: bool = Field(description="the hook's getState gives the demo's time")
    ways: dict[str, dict[str, Any]] = Field(
        description="'hook' and 'keyboard': each way's cycles (probes/_cycle.py), or {way, untested: reason}"
    )


class PlaybackEvidence(Evidence):
    probe = "playback"
    evidence_version = "2"  # 2: typed; fields as in probe version 1

    viewport: list[int] = Field(description="[width, height] of this probe's pages")
    autoplay: Autoplay
    pause_resume_replay: PauseResumeReplay
