"""Which side took the time when frames were late: the page's main thread, or rendering.

A frame comes late when the work of the frame before it did not fit in a display frame. The
sampler keeps, per frame, the main thread's time (the page's rAF callbacks plus style, layout
and paint: `main_ms`) and when the frame's first callback began (`entry`). A late interval is
the main thread's when the frame before it kept the main thread busy for most of a display
frame, or when the late frame's callbacks began at least `lag_vsyncs` display frames after its
frame time (other tasks of the page held the thread: timers, messages, long tasks; a lag
shorter than that is also what a busy machine's scheduler gives any thread). Otherwise the main thread was done in
time and the frame was held up after it: raster, the GPU process, the compositor, or a
machine without the headroom to render this viewport at 60 Hz. The split names a side, not a
culprit within it; the per-frame figures stay in the evidence for a reviewer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAIN, RENDERING, MIXED = "main_thread", "rendering", "mixed"


def late_side(
    late: np.ndarray,
    main_ms: list[float] | None,
    entry_lag_ms: np.ndarray | None,
    vsync_ms: float,
    busy_share: float,
    lag_vsyncs: float,
    majority: float,
) -> dict[str, Any] | None:
    """For the late intervals (`late[k]`: frame k -> k+1 was late), how many were the main
    thread's and how many rendering's, the side that took most (at least `majority` of those
    told apart, else mixed) and one sentence. None without late frames or main-thread times."""
    n_late = int(late.sum())
    if n_late == 0 or main_ms is None or len(main_ms) != late.size + 1:
        return None
    busy_ms, lag_ms = busy_share * vsync_ms, lag_vsyncs * vsync_ms
    main = np.asarray(main_ms, float)[:-1]
    lag = np.zeros(late.size) if entry_lag_ms is None else np.asarray(entry_lag_ms, float)[1:]
    known = late & ((main >= 0) | (lag >= lag_ms))
    by_main = known & ((main >= busy_ms) | (lag >= lag_ms))
    by_render = known & ~by_main
    m, r, told = int(by_main.sum()), int(by_render.sum()), int(known.sum())
    side = None
    if told:
        side = MAIN if m >= majority * told else RENDERING if r >= majority * told else MIXED
    main_late = np.asarray(main_ms, float)[:-1][by_main & (main >= 0)]
    return {
        "late_intervals": n_late,
        "main_thread": m,
        "main_thread_script": int((by_main & (main >= busy_ms)).sum()),
        "rendering": r,
        "unknown": n_late - told,
        "busy_ms": round(busy_ms, 2),
        "lag_ms": round(lag_ms, 2),
        "main_ms_median_in_late": None if main_late.size == 0 else round(float(np.median(main_late)), 2),
        "side": side,
        "sentence": _sentence(side, n_late, m, r, busy_ms, lag_ms),
    }


def _sentence(side: str | None, n: int, m: int, r: int, busy_ms: float, lag_ms: float) -> str:
    frames = f"{n} late frame{'s' if n != 1 else ''}"
    if side == MAIN:
        return (
            f"The page's main thread took the time: {m} of {frames} came after a frame whose script, style, "
            f"layout and paint ran {busy_ms:.1f} ms or more, or whose callbacks started {lag_ms:.0f} ms late."
        )
    if side == RENDERING:
        return (
            f"Rendering took the time, not the page's script: in {r} of {frames} the main thread was done "
            f"within {busy_ms:.1f} ms and the frame was held up after it (raster, the GPU process, the "
            "compositor, or a machine without headroom for this viewport)."
        )
    if side == MIXED:
        return f"Both sides took time: of {frames}, {m} were the main thread's and {r} rendering's."
    return f"Of {frames}, none could be told apart (the main thread's times were not recorded)."
