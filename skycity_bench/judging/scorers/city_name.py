"""Is the city's name on screen in the closing shot? Judged from the raw checks the tour
recorded (probes/_city_name.py), for camera.ending (scorers/camera.py).

Each check (the timeline evidence's `name_checks[]`) holds:
    t_s            bench seconds of the look
    dom_elements   innermost page elements whose text holds the name
    elements[]     up to 4 of them: {tag, text, hidden, opacity, rect, in_viewport, clip}
    changed_share  share of the shown elements' clip whose pixels changed (by more than
                   diff_level) when those elements were hidden; 0 when none was shown
    diff_level     the per-pixel change counted
    clip           the captured box (absent when no element was shown)
    canvas         {calls, full_name, all_characters, onscreen, offscreen_only, where}: the
                   fillText/strokeText calls that drew the name or characters of it

The threshold (`name_min_changed_share`) is the scenario's `scorers: city_name:`; the
outcome is a code (CityName) and the prose is rendered from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.judging.scorers import scorer_settings


class CityNameSettings(BaseModel):
    """The scenario's `scorers: city_name:` (the reason for the value is a comment there)."""

    model_config = ConfigDict(extra="forbid")

    name_min_changed_share: float = Field(
        gt=0, le=1, description="page text is visible when hiding it changes at least this share of its clip"
    )


scorer_settings("city_name", CityNameSettings)


class CityName(str, Enum):
    PAGE_TEXT = "page_text"  # visible as page text: True
    CANVAS = "canvas"  # drawn on an on-screen canvas: reviewers (None)
    CANVAS_OFFSCREEN = "canvas_offscreen"  # drawn into an off-screen canvas (a texture): reviewers
    NO_NAME = "no_name"  # the hook gave no cityName: nothing to look for (None)
    MISSING = "missing"  # neither: False


_VISIBLE = {
    CityName.PAGE_TEXT: True,
    CityName.CANVAS: None,
    CityName.CANVAS_OFFSCREEN: None,
    CityName.NO_NAME: None,
    CityName.MISSING: False,
}

_PROSE = {
    CityName.PAGE_TEXT: "'{name}' is visible as page text at {seen}",
    CityName.CANVAS: "'{name}' is drawn on a canvas (fillText) at {drawn}: the bench cannot read canvas text; "
    "reviewers check the keyframes",
    CityName.CANVAS_OFFSCREEN: "'{name}' is drawn into an off-screen canvas (probably a WebGL texture) (fillText) at "
    "{drawn}: the bench cannot read canvas text; reviewers check the keyframes",
    CityName.NO_NAME: "the hook gives no cityName, so the bench does not know which name to look for",
    CityName.MISSING: "'{name}' is neither visible page text nor drawn on a canvas at the checks ({checked}){why}",
}


def _times(ts: Iterable[float]) -> str:
    return ", ".join(f"{t:g} s" for t in ts)


def judge(checks: list[dict[str, Any]], name: str | None, s: CityNameSettings) -> dict[str, Any]:
    """{visible, source, code, reason, seen_at_s | drawn_at_s}: visible True (seen as page
    text), None (drawn on a canvas, or no name to look for: reviewers decide), False."""
    facts: dict[str, Any]
    if not name:
        code, facts = CityName.NO_NAME, {}
    else:
        seen = [c["t_s"] for c in checks if (c.get("changed_share") or 0) >= s.name_min_changed_share]
        drawn = [c for c in checks if c["canvas"]["full_name"] or c["canvas"]["all_characters"]]
        if seen:
            code, facts = CityName.PAGE_TEXT, {"seen_at_s": seen}
        elif drawn:
            off = all(c["canvas"]["offscreen_only"] for c in drawn)
            code = CityName.CANVAS_OFFSCREEN if off else CityName.CANVAS
            facts = {"drawn_at_s": [c["t_s"] for c in drawn]}
        else:
            code, facts = CityName.MISSING, {}
    dom = any(c.get("dom_elements") for c in checks)
    reason = _PROSE[code].format(
        name=name,
        seen=_times(facts.get("seen_at_s", [])),
        drawn=_times(facts.get("drawn_at_s", [])),
        checked=_times(c["t_s"] for c in checks),
        why=" (page text holding it exists but is hidden, covered or outside the viewport)" if dom else "",
    )
    source = code.value if code in (CityName.PAGE_TEXT, CityName.CANVAS, CityName.CANVAS_OFFSCREEN) else None
    return {"visible": _VISIBLE[code], "source": source, "code": code.value, "reason": reason, **facts}
