"""Evidence of probes/framing.py (item packaging.framing): the layout at each framing
viewport at given demo times, and the blank bands of its frames."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class BlankBand(Part):
    side: str = Field(description="top | bottom | left | right")
    px: int = Field(description="depth of the flat band from that edge")
    share: float = Field(description="share of the frame the band covers")
    counted_share: float = Field(description="share of it counted as blank (outside the scene, or a sharp edge)")
    sharp_edge_share: float = Field(description="share of the first line past the band that differs sharply")
    colour_bgr: list[int]


class FramingSample(Part):
    """One sample time at one viewport (browser/js/framing_probe.js's layout reading)."""

    t_s: float
    excused_texts: list[str] = Field(description="texts excused as the demo's own (city name, open shop card)")
    page: dict[str, Any] = Field(description="scrolling: scroll size against the viewport, overflow, scrollbars")
    scene: Optional[dict[str, Any]] = Field(description="the scene element: tag, CSS rect, drawing-buffer size")
    overlays: list[dict[str, Any]] = Field(
        description="elements painted over the scene (rect, why, text, tag, excused)"
    )
    canvas_texts: list[Any] = Field(description="strings drawn on canvases in the last 0.5 s")


class FramingViewport(Part):
    viewport: list[int] = Field(description="[width, height] CSS px")
    samples: list[FramingSample]
    blank_bands: list[BlankBand]
    blank_share: float = Field(description="share of the frame in counted blank bands, all sides together")
    file: str = Field(description="the annotated screenshot of the last sample")
    clock: dict[str, Any] = Field(description="the page's fake-clock log (slow vs hung, browser/clock_budget.py)")


class FramingEvidence(Evidence):
    probe = "framing"
    evidence_version = "2"  # 2: typed; fields as in probe version 1

    viewports: list[FramingViewport]
    times_s: list[float] = Field(description="demo seconds sampled at each viewport")
