"""The 流畅度 tier table on synthetic interval arrays: every boundary, both conditions,
and the worse window deciding."""

import numpy as np
import pytest

from skycity_bench.analysis import statistics as stats
from skycity_bench.inputs.rubric import load_rubric

ITEM = load_rubric().item("smoothness.frame_pacing")
TIERS = ITEM.get("tiers")
LONG = ITEM.get("long_frame_ms")


def intervals(n=1000, base=16.7, p95=None, long_share=0.0, long_ms=80.0):
    """n intervals with exactly `long_share` of them long, and (if given) the P95 at `p95`."""
    a = np.full(n, base)
    k_long = int(round(long_share * n))
    if p95 is not None:
        a[: int(0.10 * n)] = p95  # 10 % at p95 puts the nearest-rank P95 there
    if k_long:
        a[-k_long:] = long_ms
    return a


def test_should_use_nearest_rank_percentile():
    assert stats.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95) == 10
    assert stats.percentile(list(range(1, 101)), 95) == 95
    assert stats.percentile([], 95) is None


def test_should_count_long_frames_strictly_over_threshold():
    assert stats.share_over([50.0, 50.0, 50.1, 10], LONG) == 0.25


@pytest.mark.parametrize(
    "p95,long_share,tier",
    [
        (20.0, 0.01, 10),
        (20.01, 0.0, 8),
        (16.7, 0.0101, 8),
        (25.0, 0.03, 8),
        (25.01, 0.0, 6),
        (16.7, 0.031, 6),
        (34.0, 0.05, 6),
        (34.01, 0.0, 3),
        (16.7, 0.051, 3),
        (50.0, 0.10, 3),
        (50.01, 0.0, 0),
        (16.7, 0.101, 0),
        (16.7, 0.0, 10),
    ],
)
def test_should_apply_every_tier_boundary_inclusively(p95, long_share, tier):
    assert stats.tier(p95, long_share, TIERS) == tier


def test_should_require_both_conditions_for_a_tier():
    assert stats.tier(16.7, 0.2, TIERS) == 0  # great P95, too many long frames
    assert stats.tier(60.0, 0.0, TIERS) == 0  # no long frames, P95 too high
    assert stats.tier(19.0, 0.04, TIERS) == 6  # P95 fits 10, long share fits only 6


@pytest.mark.parametrize("share", [0.0, 0.005, 0.02, 0.04, 0.07, 0.2])
def test_should_measure_designed_long_share_exactly(share):
    a = intervals(long_share=share)
    assert stats.share_over(a, LONG) == pytest.approx(share)


def test_should_return_floor_when_nothing_was_measured():
    assert stats.tier(None, None, TIERS, floor=0) == 0


def test_should_flag_unstable_spread():
    assert stats.spread([10, 10.1, 9.9])["unstable"] is False
    assert stats.spread([10, 20, 5])["unstable"] is True
