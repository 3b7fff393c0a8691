"""How much `run --overlap pinned` disturbed the pacing browser: the
thresholds and the judgement; the runner re-runs the real-time probes alone when it says
so, and the report keeps the figures either way (environment.overlap.perturbation).

The figures are a blank page's rAF intervals on the pinned pacing browser (browser/
calibration.py): once alone, before the fake-clock probes start, and beside them (before
and, while they still run, after the real-time probes). Compared are the rubric's two
pacing figures: the P95 interval (relative change) and the share of intervals over the
long-frame threshold (change in share points). A figure that could not be measured is a
reason too: an overlap nobody measured is never trusted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.judging.scorers import scorer_settings


@scorer_settings("overlap")
class Settings(BaseModel):
    """The scenario's `scorers.overlap` (reasons beside the values in scenarios/skycity.yaml).
    No bounds: a negative value makes every overlap too disturbed, a huge one none (tests
    force the re-run, or its absence, so)."""

    model_config = ConfigDict(extra="forbid")

    max_p95_change: float = Field(description="|P95 beside - alone| / alone")
    max_long_frame_share_change: float = Field(description="|share beside - alone|, in share points")


def _change(solo: dict[str, Any], during: dict[str, Any]) -> tuple[float | None, float | None]:
    a, b = solo.get("p95_ms"), during.get("p95_ms")
    p95 = None if a is None or b is None or a <= 0 else (b - a) / a
    la, lb = solo.get("long_frame_share"), during.get("long_frame_share")
    share = None if la is None or lb is None else lb - la
    return p95, share


def perturbation(
    solo: dict[str, Any] | None, during: dict[str, dict[str, Any] | None], settings: Settings
) -> dict[str, Any]:
    """The figure and the verdict: each calibration beside the probes against the one alone,
    the largest changes, and `too_perturbed` (the reasons; empty when within the limits)."""
    reasons: list[str] = []
    out: dict[str, Any] = {
        "alone": solo,
        "beside": during,
        "max_p95_change": settings.max_p95_change,
        "max_long_frame_share_change": settings.max_long_frame_share_change,
    }
    if not solo or solo.get("p95_ms") is None:
        reasons.append(
            "the blank page alone on the pacing cores could not be measured"
            + (f" ({solo['error']})" if solo and solo.get("error") else "")
        )
    measured = {k: v for k, v in during.items() if v and v.get("p95_ms") is not None}
    for k, v in during.items():
        if k not in measured and v is not None:
            reasons.append(
                f"the blank page beside the probes ({k}) could not be measured"
                + (f" ({v['error']})" if v.get("error") else "")
            )
    if not measured:
        reasons.append("no blank-page calibration ran beside the probes")
    worst_p95 = worst_share = None
    if solo and solo.get("p95_ms") is not None:
        for k, v in measured.items():
            p95, share = _change(solo, v)
            if p95 is not None and (worst_p95 is None or abs(p95) > abs(worst_p95)):
                worst_p95 = p95
            if share is not None and (worst_share is None or abs(share) > abs(worst_share)):
                worst_share = share
            if p95 is not None and abs(p95) > settings.max_p95_change:
                reasons.append(
                    f"the pacing cores' P95 frame interval {k} was {v['p95_ms']:.2f} ms against "
                    f"{solo['p95_ms']:.2f} ms alone ({p95:+.1%}; limit ±{settings.max_p95_change:.0%})"
                )
            if share is not None and abs(share) > settings.max_long_frame_share_change:
                reasons.append(
                    f"the pacing cores' long-frame share {k} was {v['long_frame_share']:.2%} against "
                    f"{solo['long_frame_share']:.2%} alone ({share * 100:+.2f} points; limit "
                    f"±{settings.max_long_frame_share_change * 100:g} points)"
                )
    out.update(
        {
            "p95_change": None if worst_p95 is None else round(worst_p95, 4),
            "long_frame_share_change": None if worst_share is None else round(worst_share, 5),
            "too_perturbed": reasons,
        }
    )
    return out
