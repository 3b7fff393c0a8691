"""The real-time video beside smoothness.frame_pacing (录屏复核), for the review app
and the static report.html alike: the video, the frame intervals of the pass it filmed (on
the video's own clock: both start at the sampler's t = 0), the long frames a reviewer can
jump to, and the spans where the capture itself dropped frames (a hold there is the
capture's, not the demo's). Built from the (blind) report.json only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

ITEM = "smoothness.frame_pacing"
MAX_STALL_BUTTONS = 40


def realtime_view(report: dict, url_of: Callable[[str], Optional[str]]) -> Optional[dict]:
    """The widget's data, or None when the run has no real-time video (or its file is gone)."""
    smooth = (report.get("measurements") or {}).get("smoothness") or {}
    name = smooth.get("realtime_video")
    url = url_of(name) if name else None
    if not url:
        return None
    probes = report.get("probes") or {}
    rc = (probes.get("realtime_capture") or {}).get("data") or {}
    if rc.get("intervals_from") == "second_pass":
        raf = (rc.get("second_pass") or {}).get("raf_ms") or []
    else:
        raf = ((probes.get("frame_pacing") or {}).get("data") or {}).get("raf_ms") or []
    cap = rc.get("capture") or {}
    item = (report.get("items") or {}).get(ITEM) or {}
    long_ms = float((item.get("evidence") or {}).get("long_frame_ms") or 50)
    fp_settings = (((report.get("scenario") or {}).get("effective") or {}).get("probes") or {}).get(
        "frame_pacing"
    ) or {}
    resolution = float(fp_settings.get("clock_resolution_ms", 0.1) or 0)
    points, stalls = [], []
    for a, b in zip(raf, raf[1:]):
        iv = round(b - a, 3)  # the clocks are read to 0.001 ms: no float dust
        points.append([round(b / 1000, 4), round(iv, 2)])
        if iv > long_ms + resolution:  # the scorer's long frame: over the threshold by more than the clock's grain
            stalls.append({"t_s": round(a / 1000, 4), "ms": round(iv, 1)})
    duration = float(cap.get("duration_s") or (raf[-1] / 1000 if raf else 0) or 1)
    return {
        "name": name,
        "url": url,
        "pass": rc.get("pass"),
        "fps": cap.get("fps"),
        "data": {
            "duration_s": duration,
            "long_ms": long_ms,
            "points": points,
            "stalls": stalls,
            "dropped_spans_s": cap.get("dropped_spans_s") or [],
            "first_frame_s": cap.get("first_frame_s"),
        },
        "stall_buttons": stalls[:MAX_STALL_BUTTONS],
        "more_stalls": max(0, len(stalls) - MAX_STALL_BUTTONS),
        "frames_captured": cap.get("frames_received"),
        "frames_dropped": cap.get("frames_dropped"),
        "mean_capture_interval_ms": cap.get("mean_capture_interval_ms"),
    }
