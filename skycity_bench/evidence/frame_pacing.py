"""Evidence of probes/frame_pacing.py (item smoothness.frame_pacing): the raw frame clock
of one real-time pass, Chromium's own account of it and the machine's noise around it.
The scorer (scorers/frame_pacing.py) computes every statistic and the tier from these."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class ChromiumFrames(Part):
    """Chromium's frames of the pass on the sampler's t = 0 (rAF clock), raw."""

    source: str = Field(description="where the figures come from (trace category, renderer)")
    error: Optional[str] = Field(None, description="why Chromium's account is missing (tracing off, no trace)")
    t_ms: Optional[list[float]] = Field(None, description="each reported frame's time on the rAF clock, ms")
    fate: Optional[str] = Field(
        None, description="one letter per frame: presented / dropped ... (browser/frame_trace.py)"
    )
    compositor_animation: Optional[str] = Field(None, description="one letter per frame: a compositor animation ran")


class Noise(Part):
    """The machine's noise around one pass (browser/calibration.py)."""

    calibration_before: dict[str, Any] = Field(
        description="blank-page calibration just before the pass ({skipped} or {error} when not measured)"
    )
    calibration_after: dict[str, Any] = Field(description="the same just after the pass")
    cpu: Optional[dict[str, Any]] = Field(
        description="/proc/stat shares during the pass: foreign_load, own_load, "
        "steal, cpus, seconds (null: not readable)"
    )
    too_noisy: list[str] = Field(
        description="the probe's noise rule's reasons (probes.frame_pacing.noise_max_*; empty: quiet enough)"
    )


class Picture(Part):
    """The scene's picture at the end of the pass (probes/frame_pacing._picture)."""

    region: str = Field(description="what was read: the largest canvas (its CSS size and place) or the viewport")
    flat_share: float = Field(description="share of its pixels in the most common colour (16 levels a channel)")
    colour_bgr: list[int] = Field(description="that colour")


class FramePacingEvidence(Evidence):
    probe = "frame_pacing"
    # 3: typed evidence; the fields are those of probe version 2.
    evidence_version = "3"

    duration_s: float = Field(description="demo seconds played in real time")
    frames: int = Field(description="rAF frames kept from t = 0 to the end of the played duration")
    raf_ms: list[float] = Field(description="each frame's rAF timestamp from t = 0, ms")
    entry_ms: list[float] = Field(description="performance.now() on entry of each rAF callback, ms (its own origin)")
    entry_to_raf_ms: float = Field(description="entry_ms + this = entry time on the rAF timestamps' origin")
    drew: list[int] = Field(description="1 where the scene visibly changed in that frame (draw signal), else 0")
    chromium: ChromiumFrames
    page_errors: list[Any] = Field(description="errors the page threw during the pass (first 20)")
    dialogs: list[Any] = Field(description="dialogs the page opened during the pass (first 20)")
    realtime_capture: Optional[dict[str, Any]] = Field(
        None, description="the screencast of this pass when the scenario films it (browser/screencast.py figures)"
    )
    noise: Noise = Field(description="noise around the pass the figures come from")
    passes: int = Field(description="real-time passes run (a noisy pass is run once more)")
    noise_of_passes: list[Noise] = Field(description="noise around every pass, in order")
    # Optional (absent in reports written before them): what the start diagnosis reads
    # (judging/start_diagnosis.py) to tell a page that never painted or painted a blank.
    painted_frames: Optional[int] = Field(
        None,
        description="frames in which the page made a canvas 2D / WebGL draw call, from load (before t = 0 "
        "too); null: the sampler could not say",
    )
    picture: Optional[Picture] = Field(None, description="how flat the picture was at the end of the pass")
    headroom: Optional[dict[str, Any]] = Field(
        None,
        description="the standard scene at this viewport before the pass (browser/render_headroom.py: p95_ms, "
        "late_share, holds_60hz; {error} when not measured); null in reports written before it",
    )
    main_ms: Optional[list[float]] = Field(
        None,
        description="each frame's main-thread time, ms: the page's rAF callbacks plus style, layout and paint "
        "(from the frame's first callback to the first task after its rendering update; -1: that task never "
        "ran before the next frame); null in reports written before it was kept",
    )
