"""packaging.framing (画幅适配且无录屏干扰 UI), from the framing probe.

Two requirements, per viewport (scenario: 1920x1080, 1280x720, 1024x768):
  fits      no scrollbars (page scrollable, or a scrollbar taking space), blank bands (flat,
            unchanging edge rows/columns) over `max_blank_share` of the area in total, and
            no stretched scene (drawing buffer aspect off its CSS box by more than
            `max_aspect_error`, with object-fit fill);
  clean     nothing painted over the scene at any sample time: controls, text, panels,
            extra canvases/images (the probe's hit test says what is on top), nor stats/debug
            text drawn into a canvas (`stats_text_pattern`). Shop cards and the city name
            are excused.

  pass     fits at every viewport and clean;
  partial  one requirement kept and the other broken only in part: clean but does not fit at
           some (not all) viewports, or fits everywhere but shows overlay UI;
  fail     does not fit at any viewport, or overlay UI and a fit problem together.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.evidence.framing import FramingEvidence, FramingViewport
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings


@scorer_settings("framing")
class Settings(BaseModel):
    """The scenario's `scorers.framing` (reasons beside the values in scenarios/skycity.yaml)."""

    model_config = ConfigDict(extra="forbid")

    max_blank_share: float = Field(ge=0, le=1, description="blank bands, all sides together, at most this share")
    max_aspect_error: float = Field(ge=0, le=1, description="drawing buffer vs CSS box aspect, relative")
    stats_text_pattern: str = Field(description="canvas text that is stats/debug output (regular expression)")


class Problem(str, Enum):
    """What keeps a viewport from fitting, or puts UI over the scene (codes; prose below)."""

    SCROLLBARS = "scrollbars"
    BLANK_BANDS = "blank_bands"
    STRETCHED = "stretched"
    OVERLAY = "overlay"
    STATS_TEXT = "stats_text"


class Outcome(str, Enum):
    FITS_NO_OVERLAY = "fits_no_overlay"
    OVERLAY_ONLY = "overlay_only"
    MISFIT_SOME = "misfit_some_viewports"
    MISFIT = "misfit"


def _found(code: Problem, text: str) -> dict[str, str]:
    return {"code": code.value, "text": text}


def fit_problems(v: FramingViewport, s: Settings) -> list[dict[str, str]]:
    out = []
    for smp in v.samples:
        pg = smp.page
        if pg["scrollable_x"] or pg["scrollable_y"] or pg["scrollbar"][0] > 0 or pg["scrollbar"][1] > 0:
            out.append(
                _found(
                    Problem.SCROLLBARS,
                    f"scrollbars at {smp.t_s:g} s: page {pg['scroll'][0]}x{pg['scroll'][1]} "
                    f"in a {pg['inner'][0]}x{pg['inner'][1]} viewport",
                )
            )
            break
    if v.blank_share > s.max_blank_share:
        sides = ", ".join(f"{b.side} {b.px} px" for b in v.blank_bands if b.counted_share > 0)
        out.append(
            _found(
                Problem.BLANK_BANDS,
                f"blank bands over {v.blank_share:.1%} of the area ({sides}; limit {s.max_blank_share:.0%})",
            )
        )
    sc = v.samples[-1].scene
    if (
        sc
        and sc.get("buffer")
        and all(sc["buffer"])
        and sc["rect"][2] > 0
        and sc["rect"][3] > 0
        and sc.get("object_fit") in (None, "", "fill")
    ):
        css = sc["rect"][2] / sc["rect"][3]
        buf = sc["buffer"][0] / sc["buffer"][1]
        err = abs(css / buf - 1)
        if err > s.max_aspect_error:
            out.append(
                _found(
                    Problem.STRETCHED,
                    f"stretched: the {sc['tag']} draws {sc['buffer'][0]}x{sc['buffer'][1]} "
                    f"(aspect {buf:.3f}) into a {sc['rect'][2]:.0f}x{sc['rect'][3]:.0f} "
                    f"box (aspect {css:.3f})",
                )
            )
    return out


def overlay_problems(v: FramingViewport, s: Settings) -> list[dict[str, str]]:
    rx = re.compile(s.stats_text_pattern)
    out: list[dict[str, str]] = []
    seen: set[tuple[Any, ...]] = set()
    for smp in v.samples:
        for o in smp.overlays:
            key = (o["tag"], o["id"], o["text"], o["why"])
            if o["excused"] or key in seen:
                continue
            seen.add(key)
            r = o["rect"]
            out.append(
                _found(
                    Problem.OVERLAY,
                    f"{o['why']} <{o['tag']}{'#' + o['id'] if o['id'] else ''}> "
                    f'"{o["text"][:40]}" at {r[0]:.0f},{r[1]:.0f} {r[2]:.0f}x{r[3]:.0f} '
                    f"({smp.t_s:g} s)",
                )
            )
        for c in smp.canvas_texts:
            if rx.search(c["text"]) and ("canvas", c["text"]) not in seen:
                seen.add(("canvas", c["text"]))
                out.append(
                    _found(
                        Problem.STATS_TEXT, f'stats/debug text drawn on a canvas: "{c["text"][:40]}" ({smp.t_s:g} s)'
                    )
                )
    return out


def _reason(outcome: Outcome, per: dict[str, dict[str, Any]], misfit: list[str], overlay: list[str]) -> str:
    """The prose, rendered from the outcome and the problems' codes and texts."""
    if outcome is Outcome.FITS_NO_OVERLAY:
        return f"fits at {', '.join(per)} with no overlay UI"
    parts = []
    if misfit:
        parts.append(
            "does not fit at " + "; ".join(f"{k}: {', '.join(p['text'] for p in per[k]['fit'])}" for k in misfit)
        )
    if overlay:
        first = next(per[k]["overlay"] for k in overlay)
        parts.append(f"overlay UI over the scene ({', '.join(overlay)}): " + "; ".join(p["text"] for p in first[:4]))
    return " | ".join(parts)


@scorer("packaging.framing", probes=("framing",), accepts={"framing": ("2",)})
def framing(inp: ScoreInput) -> ItemScore:
    d: FramingEvidence = inp.evidence("framing")
    s: Settings = inp.settings("framing")
    per: dict[str, dict[str, Any]] = {}
    files = []
    for v in d.viewports:
        label = f"{v.viewport[0]}x{v.viewport[1]}"
        per[label] = {
            "fit": fit_problems(v, s),
            "overlay": overlay_problems(v, s),
            "blank_share": v.blank_share,
            "file": v.file,
        }
        files.append(v.file)
    misfit = [k for k, p in per.items() if p["fit"]]
    overlay = [k for k, p in per.items() if p["overlay"]]
    if not misfit and not overlay:
        outcome, status = Outcome.FITS_NO_OVERLAY, "pass"
    elif overlay and not misfit:
        outcome, status = Outcome.OVERLAY_ONLY, "partial"
    elif misfit and not overlay and len(misfit) < len(per):
        outcome, status = Outcome.MISFIT_SOME, "partial"
    else:
        outcome, status = Outcome.MISFIT, "fail"
    ev = {
        "outcome": outcome.value,
        "problems": sorted({p["code"] for k in per for p in per[k]["fit"] + per[k]["overlay"]}),
        "viewports": per,
        "files": files,
        "reason": _reason(outcome, per, misfit, overlay),
    }
    return ItemScore(status, inp.objective(status), ev)
