"""Evidence of probes/timeline.py (items camera.phases, camera.motion, camera.ending): the
hook's phase claims, per-sample camera registration, the reset series and the city-name
checks of one fake-clock pass. Cuts, the reset verdict and findings are the scorer's."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence


class TimelineEvidence(Evidence):
    probe = "timeline"
    # 2: typed (issue 17); fields as in probe version 1. 3: no city_name_verdict (the scorer
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
