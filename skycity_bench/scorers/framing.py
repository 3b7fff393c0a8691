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

from . import ItemScore, ScoreInput, scorer


def fit_problems(v: dict, s) -> list[str]:
    out = []
    for smp in v["samples"]:
        pg = smp["page"]
        if pg["scrollable_x"] or pg["scrollable_y"] or pg["scrollbar"][0] > 0 or pg["scrollbar"][1] > 0:
            out.append(f"scrollbars at {smp['t_s']:g} s: page {pg['scroll'][0]}x{pg['scroll'][1]} in a "
                       f"{pg['inner'][0]}x{pg['inner'][1]} viewport")
            break
    if v["blank_share"] > s.max_blank_share:
        sides = ", ".join(f"{b['side']} {b['px']} px" for b in v["blank_bands"] if b.get("counted_share", b["share"]) > 0)
        out.append(f"blank bands over {v['blank_share']:.1%} of the area ({sides}; limit {s.max_blank_share:.0%})")
    sc = v["samples"][-1].get("scene")
    if sc and sc.get("buffer") and all(sc["buffer"]) and sc["rect"][2] > 0 and sc["rect"][3] > 0 \
            and sc.get("object_fit") in (None, "", "fill"):
        css = sc["rect"][2] / sc["rect"][3]
        buf = sc["buffer"][0] / sc["buffer"][1]
        err = abs(css / buf - 1)
        if err > s.max_aspect_error:
            out.append(f"stretched: the {sc['tag']} draws {sc['buffer'][0]}x{sc['buffer'][1]} (aspect {buf:.3f}) into a "
                       f"{sc['rect'][2]:.0f}x{sc['rect'][3]:.0f} box (aspect {css:.3f})")
    return out


def overlay_problems(v: dict, s) -> list[str]:
    rx = re.compile(s.stats_text_pattern)
    out, seen = [], set()
    for smp in v["samples"]:
        for o in smp["overlays"]:
            key = (o["tag"], o["id"], o["text"], o["why"])
            if o["excused"] or key in seen:
                continue
            seen.add(key)
            r = o["rect"]
            out.append(f"{o['why']} <{o['tag']}{'#' + o['id'] if o['id'] else ''}> \"{o['text'][:40]}\" at "
                       f"{r[0]:.0f},{r[1]:.0f} {r[2]:.0f}x{r[3]:.0f} ({smp['t_s']:g} s)")
        for c in smp.get("canvas_texts", []):
            if rx.search(c["text"]) and ("canvas", c["text"]) not in seen:
                seen.add(("canvas", c["text"]))
                out.append(f"stats/debug text drawn on a canvas: \"{c['text'][:40]}\" ({smp['t_s']:g} s)")
    return out


@scorer("packaging.framing", probes=("framing",))
def framing(inp: ScoreInput) -> ItemScore:
    d = inp.data("framing")
    s = inp.scenario.probe_settings("framing")
    per, files = {}, []
    for v in d["viewports"]:
        label = f"{v['viewport'][0]}x{v['viewport'][1]}"
        per[label] = {"fit": fit_problems(v, s), "overlay": overlay_problems(v, s), "blank_share": v["blank_share"],
                      "file": v["file"]}
        files.append(v["file"])
    misfit = [k for k, p in per.items() if p["fit"]]
    overlay = [k for k, p in per.items() if p["overlay"]]
    ev = {"viewports": per, "files": files}
    first_over = next((per[k]["overlay"] for k in overlay), [])
    if not misfit and not overlay:
        ev["reason"] = f"fits at {', '.join(per)} with no overlay UI"
        return ItemScore("pass", inp.objective("pass"), ev)
    parts = []
    if misfit:
        parts.append("does not fit at " + "; ".join(f"{k}: {', '.join(per[k]['fit'])}" for k in misfit))
    if overlay:
        parts.append(f"overlay UI over the scene ({', '.join(overlay)}): " + "; ".join(first_over[:4]))
    ev["reason"] = " | ".join(parts)
    if (overlay and not misfit) or (misfit and not overlay and len(misfit) < len(per)):
        return ItemScore("partial", inp.objective("partial"), ev)
    return ItemScore("fail", inp.objective("fail"), ev)
