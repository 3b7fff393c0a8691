"""The leaderboard figure: one line per system, best mean at the top, its 95 % interval as a
bar, its mean as a diamond and every candidate (a sample's mean total over its runs) as a dot,
so a reader sees the spread the interval summarises.

Plain data in (a mapping per system: system, mean, ci, candidates), PNG bytes out, so the
figure does not depend on how the statistics were computed."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

BAR = "#4477aa"
DOT = "#88aacc"
NO_INTERVAL = "#999999"


def leaderboard_png(systems: Sequence[Mapping[str, Any]], title: str = "") -> bytes:
    """PNG bytes of the figure; systems without a mean (no totals yet) are left out."""
    shown = sorted((s for s in systems if s.get("mean") is not None), key=lambda s: -float(s["mean"]))
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * max(len(shown), 1)))
    try:
        _draw(ax, shown)
        ax.set_title(title or "mean 100-point total, 95 % interval, one dot per candidate", fontsize=10)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
    finally:
        plt.close(fig)
    return buf.getvalue()


def write_leaderboard_figure(path: Path, systems: Sequence[Mapping[str, Any]], title: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(leaderboard_png(systems, title))
    return path


def _draw(ax: Any, shown: Sequence[Mapping[str, Any]]) -> None:
    # A fixed jitter (not random) keeps the figure byte-stable for the same data.
    for y, s in enumerate(reversed(shown)):
        dots = np.asarray(s.get("candidates") or [], float)
        if dots.size:
            jitter = (np.arange(dots.size) % 7 - 3) * 0.04
            ax.scatter(dots, y + jitter, s=12, color=DOT, alpha=0.7, zorder=1, linewidths=0)
        ci = s.get("ci")
        if ci is not None:
            ax.plot(ci, [y, y], color=BAR, lw=3, solid_capstyle="butt", zorder=2)
        ax.scatter([s["mean"]], [y], marker="D", s=40, color=BAR if ci is not None else NO_INTERVAL, zorder=3)
    names = [str(s["system"]) + ("" if s.get("ci") is not None else " (no interval)") for s in reversed(shown)]
    ax.set_yticks(range(len(shown)), names, fontsize=9)
    ax.set_ylim(-0.6, max(len(shown), 1) - 0.4)
    ax.set_xlabel("100-point total")
    ax.grid(axis="x", color="#e5e5e5", zorder=0)
    ax.set_axisbelow(True)
