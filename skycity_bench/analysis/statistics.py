"""Statistics the scorers share: percentiles, long-frame shares, tiers, spreads."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Optional

import numpy as np
import numpy.typing as npt


def p95(values: npt.ArrayLike) -> Optional[float]:
    return percentile(values, 95)


def percentile(values: npt.ArrayLike, q: float) -> Optional[float]:
    """Nearest-rank percentile: the smallest observed value with at least q % of the values at
    or below it. An observed interval, never an interpolation between two, so a tier boundary
    such as "P95 ≤ 20 ms" is decided by real frames."""
    a = np.sort(np.asarray(values, dtype=float))
    if a.size == 0:
        return None
    k = max(1, math.ceil(q / 100.0 * a.size))
    return float(a[k - 1])


def share_over(values: npt.ArrayLike, threshold: float) -> Optional[float]:
    """Share of values strictly greater than threshold, 0..1."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return None
    return float(np.count_nonzero(a > threshold) / a.size)


def tier(
    p95_ms: Optional[float],
    long_ratio: Optional[float],
    tiers: Iterable[dict[str, Any]],
    floor: float = 0,
    resolution_ms: float = 0.0,
) -> float:
    """The highest tier whose both conditions hold (≤ inclusive); `floor` when none does.

    `resolution_ms` is the clock's resolution: a P95 within it of a boundary cannot be told
    from the boundary itself and counts as on it."""
    if p95_ms is None or long_ratio is None:
        return floor
    for t in sorted(tiers, key=lambda t: -t["points"]):
        if p95_ms <= t["p95_ms_max"] + resolution_ms + 1e-9 and long_ratio <= t["long_ratio_max"] + 1e-12:
            return t["points"]
    return floor


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean, stdev, min, max and relative stdev; unstable when stdev ≥ 10 % of the mean
    (pyperf's warning threshold)."""
    a = np.asarray([v for v in values if v is not None], dtype=float)
    if a.size == 0:
        return {"n": 0}
    mean = float(a.mean())
    sd = float(a.std(ddof=1)) if a.size > 1 else 0.0
    rel = sd / abs(mean) if mean else 0.0
    return {
        "n": int(a.size),
        "mean": mean,
        "stdev": sd,
        "min": float(a.min()),
        "max": float(a.max()),
        "rel_stdev": rel,
        "unstable": bool(rel >= 0.10),
    }
