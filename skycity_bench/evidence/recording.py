"""Evidence of probes/recording.py (the reviewers' recording; files read by camera.* and
the review tool): the video, keyframes and contact sheet of the fake-clock 0–65 s pass."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence


class RecordingEvidenceV3(Evidence):
    """Version 3 (OpenCV's VP8 writer; version 4 encodes through PyAV), kept so that stored
    runs are still read (rescore)."""

    probe = "recording"
    # 2: typed; fields as in probe version 1. 3: no timeline_pass (the timeline's
    # evidence of the same pass is its own record: ProbeSpec.produces, probes/_tour.py).
    evidence_version = "3"

    file: str = Field(description="the video, relative to the run folder")
    container: str
    codec: str = Field(description="VP8 (OpenCV's writer)")
    fps: int
    width: int
    height: int
    frames: int
    duration_s: float
    end_s: float
    first_frame_s: float
    keyframe_interval_s: float = Field(description="PNG keyframes for reviewers every this many seconds")
    keyframes: list[dict[str, Any]] = Field(description="{t_s, file} PNG keyframes")
    contact_sheet: Optional[str] = Field(description="the contact sheet of the keyframes")
    size_bytes: int
    wall_s: float
    frames_per_wall_s: float
    capture_ms_mean: float
    encode_ms_mean: float
    late_frames: int


class RecordingEvidenceV4(RecordingEvidenceV3):
    """Version 4 (before density read the tour's frames), kept for stored runs."""

    probe = "recording"
    # 4: VP9 (VP8 where PyAV lacks it) through PyAV in a worker thread fed by a
    # bounded queue (video_encode.py); adds video_keyframe_every_s, decode_ms_mean,
    # encode_wait_s and truncated (the tour's wall-clock budget).
    evidence_version = "4"

    codec: str = Field(description="VP9, or VP8 where PyAV lacks libvpx-vp9 (video_encode.py)")
    video_keyframe_every_s: float = Field(description="the video's own keyframes (seek points) at most this far apart")
    decode_ms_mean: float = Field(description="JPEG decoding per frame (CPU ms of the encoder's thread)")
    encode_ms_mean: float = Field(description="colour conversion + encoding per frame (CPU ms of the encoder's thread)")
    encode_wait_s: float = Field(description="seconds the capture waited for the encoder's queue (0: encoding kept up)")
    truncated: Optional[dict[str, Any]] = Field(
        description="null, or {at_s, of_s, reason, wall_budget_s}: the tour's wall-clock budget stopped the pass; "
        "the video holds 0–at_s only"
    )


class RecordingEvidence(RecordingEvidenceV4):
    probe = "recording"
    # 5 (capture once): adds density_frames, the density probe's frames
    # captured in the same pass when density runs after it.
    evidence_version = "5"

    density_frames: Optional[dict[str, Any]] = Field(
        description="null (density did not run after this pass), or {index, frames, claims, bytes, capture_s}: the "
        "density probe's frames of the dense window taken in this pass (probes/_tour.py DensityFrames); "
        "index is recordings/density_frames/index.json; the PNGs are removed once density has read them"
    )
