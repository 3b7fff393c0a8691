"""The density/behaviour figure for reviewers: counts per sample, speed histogram, heading
rose and the verified objects' tracks."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from skycity_bench.analysis.vision.behavior import tracks_for_plot  # noqa: E402


def behavior_plot(path: Path, samples: list[dict], ev: dict, rows: list[dict]) -> None:
    fig = plt.figure(figsize=(15, 8.5))
    ax = fig.add_subplot(2, 2, 1)
    t = [r["t"] for r in rows]
    ax.plot(t, [r["visual_count"] for r in rows], "o-", label="visual count (pixels)")
    if any(r["verified_count"] is not None for r in rows):
        ax.plot(t, [r["verified_count"] for r in rows], "s-", label="verified claims")
        ax.plot(t, [r["claimed_count"] for r in rows], "x--", alpha=0.6, label="claimed by the hook")
    dens = [r["t"] for r in rows if r.get("densified")]
    for x in dens:
        ax.axvline(x, color="#ccc", lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("objects")
    ax.set_title("counts per sample (grey lines: densified samples)")
    ax.legend(fontsize=8)
    hx = fig.add_subplot(2, 2, 2)
    speeds = []
    for s in samples:
        for c in s.get("claims") or []:
            if c.get("verdict") == "moved" and "dx" in c:
                speeds.append(np.hypot(c["dx"], c["dy"]))
    dt = None
    if samples:
        dt = samples[0].get("t_b", 0) - samples[0].get("t", 0)
    if speeds and dt:
        hx.hist(np.asarray(speeds) / dt, bins=30, color="#4477aa")
    sp = ev.get("speed_px_s") or {}
    hx.set_title(
        f"speed of verified objects (px/s, camera removed) median {sp.get('median')}, levels {ev.get('speed_levels')}",
        fontsize=9,
    )
    hx.set_xlabel("px/s")
    rx = fig.add_subplot(2, 2, 3, projection="polar")
    sec = np.asarray(ev.get("heading_sectors") or [0] * 8, float)
    ang = np.radians(np.arange(8) * 45)
    rx.bar(-ang, sec, width=np.radians(40), color="#cc6677")  # screen y points down: mirror
    rx.set_title(
        f"headings: {ev.get('distinct_directions')} distinct directions; lockstep share "
        f"{(ev.get('lockstep') or {}).get('share')}",
        fontsize=9,
    )
    tx = fig.add_subplot(2, 2, 4)
    for _cid, pts in sorted(tracks_for_plot(samples).items()):
        p = np.asarray(pts)
        tx.plot(p[:, 1], p[:, 2], "-", lw=0.8)
        tx.plot(p[-1, 1], p[-1, 2], ".", ms=3)
    tx.invert_yaxis()
    tx.set_aspect("equal", adjustable="datalim")
    tx.set_title(
        f"tracks of verified objects (hook positions): {ev.get('objects_tracked')} objects, "
        f"{ev.get('distinct_routes')} distinct routes",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
