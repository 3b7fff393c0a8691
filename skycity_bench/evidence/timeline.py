"""Evidence of probes/timeline.py (items camera.phases, camera.motion, camera.ending): the
hook's phase claims, per-sample camera registration, the reset series and the city-name
checks of one fake-clock pass. Cuts, the reset verdict and findings are the scorer's.

The timeline probe's settings (`TimelineSettings`, the scenario's `probes.timeline`) live
here beside its evidence: the camera scorer reads what the series were sampled with (the
analysis width, the ending window) and must not import the probes, so the model is
registered for its section here (inputs/settings_registry.py) as well as by the probe.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.evidence.contract import Evidence
from skycity_bench.inputs.settings_registry import PROBE_SETTINGS


class CutRule(BaseModel):
    """Which frame-to-frame changes are cuts (analysis/motion.py detect_cuts): the tour pass
    keeps the frames of the cuts it finds for reviewers. The camera scorer judges
    camera.motion with the same rule (its own `scorers.camera` fields of these names); the
    scenario file writes the values once (reasons there)."""

    model_config = ConfigDict(extra="forbid")

    cuts_from_s: float = Field(ge=0, description="no cut before this (a loading screen)")
    cut_window_s: float = Field(gt=0, description="the local median a cut is compared with spans this")
    cut_min_residual: float = Field(gt=0, le=1, description="change left after alignment, at least")
    cut_residual_factor: float = Field(ge=1, description="x the local median residual, at least")
    cut_max_inlier_ratio: float = Field(ge=0, le=1, description="features followed, at most")
    jump_min_share: float = Field(gt=0, description="view moved this share of its width in one sample")
    jump_factor: float = Field(ge=1, description="x the motion around it")


class TimelineSettings(BaseModel):
    """What steers the tour pass's timeline part (reasons beside the values in
    scenarios/skycity.yaml). The cut, jump and reset thresholds the samples are judged with
    are the camera scorer's (`scorers: camera:`); `cut_rule` only chooses which cut frames
    are kept."""

    model_config = ConfigDict(extra="forbid")

    sample_fps: float = Field(gt=0, le=60)
    end_s: float = Field(gt=0, le=600)
    tour_s: float = Field(gt=0, le=600)
    opening_window_s: float = Field(gt=0)
    ending_window_s: float = Field(gt=0)
    analysis_width: int = Field(ge=64, le=3840)
    city_name_checks: int = Field(ge=1, le=20)
    name_diff_level: int = Field(ge=1, le=255, description="a pixel of the name's clip changed by more than this")
    max_cut_frames: int = Field(ge=0)
    cut_rule: CutRule = Field(description="the cuts whose frames are kept (at most max_cut_frames)")
    budget_s: float = Field(gt=0)


PROBE_SETTINGS.register("timeline", TimelineSettings)


class TimelineEvidence(Evidence):
    probe = "timeline"
    # 2: typed; fields as in probe version 1. 3: no city_name_verdict (the scorer
    # judges the raw name_checks, scorers/city_name.py)
    evidence_version = "3"

    stepped_by: str = Field(description="timeline | recording: whose pass sampled it")
    sample_fps: float
    end_s: float
    tour_s: float
    viewport: dict[str, int] = Field(description="{width, height} CSS px")
    analysis_size: Optional[list[int]] = Field(description="[width, height] frames were registered at")
    css_per_px: float = Field(description="CSS px per analysis px")
    city_name: Optional[str] = Field(description="the hook's cityName")
    hook: dict[str, Any] = Field(description="{describe, getState: {ok, failed, first_error, invalid_phase}}")
    states: dict[str, list[Any]] = Field(description="series t_s, phase, time, ended from getState")
    phases: list[dict[str, Any]] = Field(description="{phase, start_s} where the hook's phase changed")
    frames: dict[str, list[Any]] = Field(description="per-sample registration series (probes/_tour.py)")
    reset: dict[str, Any] = Field(
        description="{post, end_ref_s, end_vs_opening}: thumbnails after the tour "
        "against the opening and the closing shot"
    )
    name_checks: list[dict[str, Any]] = Field(
        description="the city-name checks in the last seconds, raw figures (shape in scorers/city_name.py)"
    )
    wall_s: float
    analysis_cpu_s: float
    spent_s: dict[str, float]
    page_errors: list[Any]
    evidence_frames: dict[str, Any] = Field(description="saved frames: cuts {t: {before, after}}, ending, opening")
