"""Evidence of probes/realtime_capture.py: the real-time video for 录屏复核 (not scored;
measurements.smoothness.realtime_video)."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence


class RealtimeCaptureEvidence(Evidence):
    probe = "realtime_capture"
    evidence_version = "2"  # 2: typed; fields as in probe version 1

    file: Optional[str] = Field(description="the video, or null when none was made")
    when: str = Field(description="review | always | never (the scenario's setting)")
    capture_in: str = Field(description="measured_pass | second_pass (the scenario's setting)")
    pass_: Optional[str] = Field(alias="pass", description="which pass was filmed, or null")
    reason: str = Field(description="why a video was or was not made")
    intervals_from: Optional[str] = Field(description="whose frame clock the plot under the video shows")
    capture: Optional[dict[str, Any]] = Field(description="the screencast's figures (browser/screencast.py)")
    problem: Optional[str] = Field(None, description="why the second pass failed")
    measured_pass_capture: Optional[dict[str, Any]] = Field(None, description="the measured pass's capture, if any")
    second_pass: Optional[dict[str, Any]] = Field(
        None, description="the second pass's frame clock (duration_s, frames, raf_ms, entry_ms, drew)"
    )

    model_config = {**Evidence.model_config, "populate_by_name": True}
