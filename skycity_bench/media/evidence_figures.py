"""Evidence figures (PNG, matplotlib's Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def frame_pacing_plot(
    path: Path, raf_ms: np.ndarray, entry_ms: np.ndarray, windows: dict, long_ms: float, evidence: dict
) -> None:
    fig, (ax, hx) = plt.subplots(1, 2, figsize=(14, 4.2), gridspec_kw={"width_ratios": [3, 1]})
    if raf_ms.size > 1:
        ax.plot(raf_ms[1:] / 1000, np.diff(raf_ms), lw=0.7, label="rAF timestamp interval")
    if entry_ms.size > 1:
        ax.plot(entry_ms[1:] / 1000, np.diff(entry_ms), lw=0.7, alpha=0.7, label="performance.now() on entry")
    colors = {"full": "#dde8ff", "dense": "#ffe2c4"}
    for name, (a, b) in windows.items():
        ax.axvspan(
            a,
            b,
            color=colors.get(name, "#eee"),
            alpha=0.5 if name == "dense" else 0.25,
            label=f"{name} window {a:g}–{b:g} s",
        )
    if long_ms:
        ax.axhline(long_ms, color="red", ls="--", lw=1, label=f"long frame > {long_ms:g} ms")
    ax.set_xlabel("time since t = 0 (s)")
    ax.set_ylabel("frame interval (ms)")
    ax.set_yscale("log")
    ax.set_title(
        f"frame intervals — tier {evidence.get('tier')}, scene updated in "
        f"{(evidence.get('scene_update_ratio') or 0):.0%} of frames"
    )
    ax.legend(fontsize=7, loc="upper right")
    if raf_ms.size > 1:
        iv = np.diff(raf_ms)
        hx.hist(np.clip(iv, 0, 120), bins=60, color="#4477aa")
        if long_ms:
            hx.axvline(long_ms, color="red", ls="--", lw=1)
    hx.set_xlabel("interval (ms, clipped at 120)")
    hx.set_ylabel("frames")
    hx.set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
