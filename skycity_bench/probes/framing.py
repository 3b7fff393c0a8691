"""Framing (item packaging.framing): the demo at each of the scenario's framing viewports
(1920x1080 and 1280x720 for 16:9, 1024x768 for 4:3), each on a fresh page (the demo sizes
itself at load, as a recording would start it), on the fake clock: what is measured is the
layout at given demo times, not timing.

At each of `times_s` it records
  - the page's scrolling (scroll size against the viewport, overflow, scrollbar width),
  - the scene element (largest canvas, else svg/video/img) with its CSS box and drawing-
    buffer size (a buffer of another aspect than its box is a stretched picture),
  - every element painted over the viewport that is not the scene (controls, text, panels,
    extra canvases) and really on top (browser/js/framing_probe.js), and the strings drawn
    on canvases in the last 0.5 s (browser/js/canvas_text.js, for stats text painted into
    the scene);
and from the frames of all sample times, the blank bands: rows/columns from each edge that
are one flat colour and unchanged between samples.
Shop cards and the closing city name are excused by their text (the hook's shop names
while a card is open, its cityName), unless the element holds controls (buttons, inputs,
sliders): a control panel headed with the city name is still a panel over the scene. The screenshot of the last sample, with offenders
outlined in red and blank bands shaded, is the evidence. The system pointer is not part of
page pixels and the bench moves no mouse here, so only cursors the page draws can show.
"""

from __future__ import annotations

import asyncio

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.browser.session import js
from skycity_bench.common.errors import ProbeError
from skycity_bench.evidence.framing import FramingEvidence
from skycity_bench.inputs.scenario import Viewport, parse_viewport
from skycity_bench.probes import probe
from skycity_bench.probes._pixel_compare import outline


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # What steers collection; the judgement's thresholds are the scenario's scorers.framing.
    viewports: list[str] = Field(description="WIDTHxHEIGHT viewports, each on a fresh page")
    times_s: list[float] = Field(min_length=1, description="demo seconds sampled at each viewport")
    band_tolerance: int = Field(ge=0, le=255, description="levels a blank band's pixels may stray from its colour")


def blank_bands(frames: list[np.ndarray], tol: int, scene_rect: list[float] | None) -> tuple[list[dict], np.ndarray]:
    """Edge bands that are one flat colour in every frame and the same in all of them, and
    of those the pixels that count as blank: outside the scene element's box (the scene does
    not reach there), or inside it when the band ends in a sharp edge (at least half of the
    first line past the band differs from the band's colour: a letterbox bar drawn into the
    canvas). A flat or gradient sky the scene paints ends raggedly or gradually (a roof here
    and there) and does not count."""
    stack = np.stack([f.astype(np.int16) for f in frames])  # N x H x W x 3
    n, h, w, _ = stack.shape
    inside = np.zeros((h, w), bool)
    if scene_rect:
        x, y, rw, rh = scene_rect
        inside[
            max(0, int(round(y))) : max(0, int(round(y + rh))), max(0, int(round(x))) : max(0, int(round(x + rw)))
        ] = True
    mask = np.zeros((h, w), bool)
    bands = []
    sides = {
        "top": stack,
        "bottom": stack[:, ::-1],
        "left": stack.transpose(0, 2, 1, 3),
        "right": stack.transpose(0, 2, 1, 3)[:, ::-1],
    }
    for side, s in sides.items():
        colour = np.median(s[0, 0], axis=0)  # colour of the outermost line
        dev = np.abs(s - colour).max(axis=(0, 3))  # N-max per pixel: lines x length
        flat = dev.max(axis=1) <= tol
        depth = len(flat) if flat.all() else int(np.argmin(flat))
        if depth == 0:
            continue
        # Sharpness: the first line past the band against the band's last line (a gradient
        # sky changes by a level or two from line to line; a letterbox edge changes at once).
        sharp = 1.0 if depth >= len(flat) else float((np.abs(s[0, depth] - s[0, depth - 1]).max(axis=1) > tol).mean())
        band = np.zeros((h, w), bool)
        if side == "top":
            band[:depth] = True
        elif side == "bottom":
            band[h - depth :] = True
        elif side == "left":
            band[:, :depth] = True
        else:
            band[:, w - depth :] = True
        counted = band & (~inside | (sharp >= 0.5))
        mask |= counted
        bands.append(
            {
                "side": side,
                "px": depth,
                "share": round(float(band.mean()), 5),
                "counted_share": round(float(counted.mean()), 5),
                "sharp_edge_share": round(sharp, 3),
                "colour_bgr": [int(v) for v in colour],
            }
        )
    return bands, mask


async def _excuses(dp) -> list[str]:
    out = []
    desc = await dp.hook.describe()
    if desc.ok and isinstance(desc.value, dict) and isinstance(desc.value.get("cityName"), str):
        out.append(desc.value["cityName"])
    card = await dp.hook.call("getActiveCard")
    if card.ok and isinstance(card.value, dict):
        shops = await dp.hook.call("getShops")
        for s in shops.value if shops.ok and isinstance(shops.value, list) else []:
            if isinstance(s, dict) and s.get("id") == card.value.get("shopId") and isinstance(s.get("name"), str):
                out.append(s["name"])
    return [x for x in out if x.strip()]


async def _one_viewport(ctx, vp: Viewport) -> dict:
    s = ctx.settings
    dp = await ctx.open_page(viewport=vp, fake_clock=True, init_scripts=[js("canvas_text.js")])
    samples, frames = [], []
    try:
        for t in s.times_s:
            await dp.seek(t, picture_only=True)  # the layout at t, not every frame on the way
            frames.append(await dp.frame())
            excuse = await _excuses(dp)
            dom = await dp.evaluate_isolated(js("framing_probe.js"), excuse, timeout=10, what="reading the layout")
            dom["canvas_texts"] = (
                await dp.evaluate(
                    "__SKYCITY__.canvasText ? __SKYCITY__.canvasText.recent(500) : []",
                    timeout=10,
                    what="reading canvas texts",
                )
                or []
            )
            samples.append({"t_s": t, "excused_texts": excuse, **dom})
    except ProbeError as e:
        # partial evidence: what was sampled, and how slow the page was (slow vs hung)
        e.data = {**e.data, "viewport": [vp.width, vp.height], "samples": samples, "clock": dp.clock.to_json()}
        raise
    finally:
        await dp.close()
    scene = samples[-1].get("scene")
    bands, mask = blank_bands(frames, s.band_tolerance, scene["rect"] if scene else None)
    img = frames[-1].copy()
    if mask.any():
        shade = img.copy()
        shade[mask] = (255, 0, 255)
        img = cv2.addWeighted(shade, 0.35, img, 0.65, 0)
    boxes = [
        {
            "x": o["rect"][0],
            "y": o["rect"][1],
            "w": o["rect"][2],
            "h": o["rect"][3],
            "label": f"{o['why']}: {o['text'] or o['tag']}",
        }
        for smp in samples
        for o in smp["overlays"]
        if not o["excused"]
    ]
    p, name = ctx.file(f"framing/framing-{vp.width}x{vp.height}.png")
    cv2.imwrite(str(p), outline(img, boxes))
    return {
        "viewport": [vp.width, vp.height],
        "samples": samples,
        "blank_bands": bands,
        "blank_share": round(float(mask.mean()), 5),
        "file": name,
        "clock": dp.clock.to_json(),
    }


@probe(
    "framing",
    order=25,
    settings=Settings,
    evidence=FramingEvidence,
    description="scene fit (scrollbars, blank bands, aspect) and overlay UI at 16:9 and 4:3 viewports",
    budget=lambda sc: 30 + 3 * sc.timeouts.load_s + sc.timeouts.probe_grace_s,
)
async def collect(ctx) -> FramingEvidence:
    # The viewports run side by side: each page idles on its fake clock between the bench's
    # calls, so three at once cost little more than one.
    sizes = [parse_viewport(text) for text in ctx.settings.viewports]
    out = await _all_or_first_error([_one_viewport(ctx, Viewport(width=v["width"], height=v["height"])) for v in sizes])
    return FramingEvidence.model_validate({"viewports": list(out), "times_s": list(ctx.settings.times_s)})


async def _all_or_first_error(coros: list) -> list:
    """Every coroutine's result, run side by side. On the first failure (a viewport's page
    that never loads) the others are cancelled, and every task's end is awaited before the
    failure is raised: none is left running to fail unseen when the browser restarts (a
    TargetClosedError printed as "Task exception was never retrieved")."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for t in tasks:
            if not t.done():
                t.cancel()
        ends = await asyncio.gather(*tasks, return_exceptions=True)
    for end in ends:
        if isinstance(end, BaseException) and not isinstance(end, asyncio.CancelledError):
            raise end
    return list(ends)
