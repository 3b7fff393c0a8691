"""Shops (items shops.hover, shops.auto_display, shops.manual_priority, shops.card_placement,
shops.touch; rubric 店铺交互 / 店铺与规格, TC-04/05/06).

The hook's getShops() only says where each shop is and what it is called. Whether a card
opened, whose it is and whether it closed is read from the page: new visible DOM elements
whose text names the shop (dom_cards.py), screenshots for readability and evidence, and
pixel figures where a card may be drawn on a canvas. Nothing is judged here: the evidence
is raw figures (the ShopsEvidence model, evidence/shops.py) and scorers/shops.py decides
(so `rescore` can re-judge a stored run).

Four fresh pages, all on the fake clock so the camera holds still between steps (each
phase's starting moment is reached with `seek(..., picture_only=True)`: in coarse clock
steps on a slow renderer, and on a fast one whose clock is checked, since only the picture
there matters; browser/page_clock.py, browser/clock_budget.py):
  1. hover, shop by shop, at hover_times_s (outside the automatic window);
  2. automatic display, no input, sampled through auto_window_s;
  3. manual priority, a hover during one of the automatic cards seen in 2, the pointer
     following the shop for the whole hold (follow.py; so does every hover awaiting
     its card in 1);
  4. touch, in a has_touch + is_mobile context, page.touchscreen.tap on each shop.
getActiveCard() is read beside every decision as a cross-check only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.common.errors import Cause, ProbeError
from skycity_bench.evidence.shops import ShopsEvidence
from skycity_bench.probes import probe
from skycity_bench.probes.shops.auto_manual import auto_phase, manual_phase
from skycity_bench.probes.shops.hover_touch import hover_phase, touch_phase
from skycity_bench.probes.shops.shop_page import ShopPage, valid_shops


class Settings(BaseModel):
    """What steers collection only. What the evidence is judged with (durations, distances,
    contrast, lag and pixel tolerances, how many shops are expected) is the scorer's: the
    scenario's `scorers: shops:` section (scorers/shops.py). Every value is the scenario's
    (`probes: shops:`, the reasons there): none has a default in code."""

    model_config = ConfigDict(extra="forbid")

    auto_window_s: tuple[float, float] = Field(description="自动展示 window, demo seconds")
    hover_times_s: list[float] = Field()
    settle_ms: float = Field(gt=0, description="frames allowed after the pointer arrives")
    close_watch_ms: float = Field(gt=0, description="how long a card is watched going after the pointer leaves")
    step_ms: float = Field(gt=0)
    sample_interval_ms: float = Field(gt=0)
    manual_hold_s: float = Field(gt=0)
    manual_min_auto_s: float = Field(gt=0, description="an automatic card shown shorter than this is not interrupted")
    manual_hover_after_s: float = Field(
        gt=0, description="the hover comes this long after the automatic card appeared (at most a third of its showing)"
    )
    min_opacity: float = Field(ge=0, le=1)
    max_card_area: float = Field(gt=0, le=1)
    edge_margin_px: float = Field(ge=0)
    max_css_wait_ms: float = Field(ge=0)
    evidence_max_px: int = Field(ge=64)
    max_screenshots: int = Field(ge=0)
    max_auto_intervals: int = Field(ge=1)
    # No DOM card after a hover: the pixels around the shop are compared (hover_touch.py)
    canvas_search_ratio: float = Field(gt=0, le=1, description="looked for within this share of the diagonal")
    canvas_diff_level: int = Field(ge=1, le=255, description="a pixel changed when a channel moved more than this")
    # A pointer that follows the shop (follow.py)
    follow_step_ms: float = Field(gt=0, description="fake-clock step between two pointer moves")
    follow_min_step_ms: float = Field(gt=0, description="shortest step for a fast shop")
    follow_lag_target_px: float = Field(gt=0, description="steps shrink so a shop moves at most this far in one")
    hand_step_px: float = Field(gt=0, description="the pointer moves in pointermoves at most this far apart")
    pixel_patch_px: int = Field(ge=4, description="half size of the patch tracked around the hook's point")
    pixel_search_px: int = Field(ge=4, description="how far beyond the hook's points the patch is searched")


def _budget(sc) -> float:
    # Up to ~8 fresh pages (resets) plus about 150 s of demo time stepped on the fake clock;
    # a heavy demo can need a real second per demo second at 1080p in software rendering.
    return 8 * sc.timeouts.load_s + 240 + sc.timeouts.probe_grace_s


@probe(
    "shops",
    order=40,
    settings=Settings,
    evidence=ShopsEvidence,
    budget=_budget,
    description="hover / auto display / manual priority / placement / touch, judged from DOM and pixels",
)
async def collect(ctx) -> ShopsEvidence:
    pg = ShopPage(ctx)
    await pg.open()
    try:
        r = await pg.dp.hook.call("getShops")
        if not r.ok:
            raise ProbeError(
                f"hook getShops(): {r.error}; without it the shops cannot be located, so every shop "
                "item is left to reviewers",
                data={"hook_error": r.error},
                cause=r.cause,
            )
        shops, problems = valid_shops(r.value)
        raw = r.value if isinstance(r.value, list) else None
        size = pg.size
    finally:
        await pg.close()
    if not shops:
        raise ProbeError(
            "hook getShops() gave no usable shop ("
            + ("; ".join(problems) or "empty list")
            + "); the shops cannot be located, so every shop item is left to reviewers",
            data={"problems": problems},
            cause=Cause.PAGE,
        )
    data: dict[str, Any] = {
        "shops": shops,
        "hook_problems": problems,
        "hook_raw_count": len(raw) if raw is not None else None,
        "viewport": list(size),
    }
    phases = (("hover", lambda: hover_phase(ctx, shops)), ("auto", lambda: auto_phase(ctx, shops)))
    for name, fn in phases:
        task = ctx.progress.task(f"shops: {name}", 1)
        try:
            data[name] = await fn()
        except ProbeError as e:
            # keep the kind (a hang or crash makes the runner restart the browser) and the cause
            raise type(e)(f"shops {name}: {e}", data={**data, **e.data}, cause=e.cause) from None
        finally:
            task.close()
    for name, fn in (
        ("manual", lambda: manual_phase(ctx, shops, data["auto"], data["hover"]["per_shop"])),
        ("touch", lambda: touch_phase(ctx, shops)),
    ):
        task = ctx.progress.task(f"shops: {name}", 1)
        try:
            data[name] = await fn()
        except ProbeError as e:
            # Later phases failing (a demo that hangs at 16 s) keep what the earlier ones found.
            data[name] = {"error": str(e), "cause": e.cause.value}
        finally:
            task.close()
    # The figures as the evidence model (evidence/shops.py): a figure the model does not
    # know is an error here, not a silent change of the report's shape.
    return ShopsEvidence.model_validate(data)
