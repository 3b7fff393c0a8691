"""Evidence of probes/recording.py (the reviewers' recording; files read by camera.* and
the review tool): the video, keyframes and contact sheet of the fake-clock 0–65 s pass."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from . import Evidence


class RecordingEvidence(Evidence):
    probe = "recording"
    # 2: typed (issue 17); fields as in probe version 1. 3: no timeline_pass (the timeline's
    # evidence of the same pass is its own record: ProbeSpec.produces, probes/_tour.py)
    evidence_version = "3"

    file: str = Field(description="the video, relative to the run folder")
    container: str
    codec: str
    fps: int
    width: int
    height: int
    frames: int
    duration_s: float
    end_s: float
    first_frame_s: float
    keyframe_interval_s: float
    keyframes: list[dict[str, Any]] = Field(description="{t_s, file} PNG keyframes")
    contact_sheet: Optional[str] = Field(description="the contact sheet of the keyframes")
    size_bytes: int
    wall_s: float
    frames_per_wall_s: float
    capture_ms_mean: float
    encode_ms_mean: float
    late_frames: int
