"""Shops (items shops.hover, shops.auto_display, shops.manual_priority, shops.card_placement,
shops.touch; rubric 店铺交互 / 店铺与规格, TC-04/05/06).

The hook's getShops() only says where each shop is and what it is called. Whether a card
opened, whose it is and whether it closed is read from the page: new visible DOM elements
whose text names the shop (_shop_dom.py), screenshots for readability and evidence, and
pixel evidence where a card is drawn on a canvas (then the item goes to review).

Four fresh pages, all on the fake clock so the camera holds still between steps:
  1. hover, shop by shop, at hover_times_s (outside the automatic window);
  2. automatic display, no input, sampled through auto_window_s;
  3. manual priority, a hover during one of the automatic cards seen in 2, the pointer
     following the shop for the whole hold (_shop_follow.py; so does every hover awaiting
     its card in 1);
  4. touch, in a has_touch + is_mobile context, page.touchscreen.tap on each shop.
getActiveCard() is read beside every decision as a cross-check only.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ProbeError
from . import probe
from ._shop_auto import auto_phase, manual_phase
from ._shop_hover import hover_phase, touch_phase
from ._shop_session import ShopPage, valid_shops


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expected_shops: int = Field(6, ge=1, description="六家店铺")
    auto_window_s: tuple[float, float] = Field((15, 40), description="自动展示 window, demo seconds")
    hover_times_s: list[float] = Field(default_factory=lambda: [3, 6, 9, 12, 42, 46, 50, 54])
    settle_ms: float = Field(200, gt=0, description="frames allowed after the pointer arrives")
    close_within_ms: float = Field(500, gt=0, description="the card must be gone this soon after leaving")
    step_ms: float = Field(100, gt=0)
    sample_interval_ms: float = Field(100, gt=0)
    auto_min_s: float = Field(2, ge=0)
    auto_max_s: float = Field(5, gt=0)
    manual_hold_s: float = Field(3, gt=0)
    max_distance_ratio: float = Field(0.25, gt=0, le=1)
    min_text_px: float = Field(12, gt=0)
    min_contrast: float = Field(4.5, ge=1, le=21)
    min_opacity: float = Field(0.1, ge=0, le=1)
    max_card_area: float = Field(0.6, gt=0, le=1)
    edge_margin_px: float = Field(4, ge=0)
    max_css_wait_ms: float = Field(1000, ge=0)
    evidence_max_px: int = Field(480, ge=64)
    max_screenshots: int = Field(60, ge=0)
    max_auto_intervals: int = Field(20, ge=1)
    # A pointer that follows the shop (issue 16; _shop_follow.py): how the probe collects ...
    follow_step_ms: float = Field(50, gt=0, description="fake-clock step between two pointer moves")
    follow_min_step_ms: float = Field(16, gt=0, description="shortest step for a fast shop")
    follow_lag_target_px: float = Field(6, gt=0, description="steps shrink so a shop moves at most this far in one")
    hand_step_px: float = Field(6, gt=0, description="the pointer moves in pointermoves at most this far apart")
    pixel_patch_px: int = Field(20, ge=4, description="half size of the patch tracked around the hook's point")
    pixel_search_px: int = Field(24, ge=4, description="how far beyond the hook's points the patch is searched")
    # ... and what the scorer judges with (scorers/shops.py)
    follow_max_lag_px: float = Field(12, gt=0, description="pointer further than this from the shop: it left it")
    hook_mismatch_px: float = Field(24, gt=0, description="pixels this far from the hook's point: the hook is wrong")
    pixel_min_match: float = Field(0.6, ge=-1, le=1, description="a patch match below this score is not counted")
    pixel_min_texture: float = Field(6, ge=0, description="a flatter patch (grey std) matches anywhere: not counted")


def _budget(sc) -> float:
    # Up to ~8 fresh pages (resets) plus about 150 s of demo time stepped on the fake clock;
    # a heavy demo can need a real second per demo second at 1080p in software rendering.
    return 8 * sc.timeouts.load_s + 240 + sc.timeouts.probe_grace_s


@probe("shops", order=40, settings=Settings, version="1", budget=_budget,
       description="hover / auto display / manual priority / placement / touch, judged from DOM and pixels")
async def collect(ctx) -> dict:
    s = ctx.settings
    pg = ShopPage(ctx)
    await pg.open()
    try:
        r = await pg.dp.hook.call("getShops")
        if not r.ok:
            raise ProbeError(f"hook getShops(): {r.error}; without it the shops cannot be located, so every shop "
                             "item is left to reviewers", data={"hook_error": r.error})
        shops, problems = valid_shops(r.value)
        raw = r.value if isinstance(r.value, list) else None
        size = pg.size
    finally:
        await pg.close()
    if not shops:
        raise ProbeError("hook getShops() gave no usable shop (" + ("; ".join(problems) or "empty list") +
                         "); the shops cannot be located, so every shop item is left to reviewers",
                         data={"problems": problems})
    data = {"shops": shops, "hook_problems": problems, "hook_raw_count": len(raw) if raw is not None else None,
            "expected_shops": s.expected_shops, "viewport": list(size)}
    phases = (("hover", lambda: hover_phase(ctx, shops)), ("auto", lambda: auto_phase(ctx, shops)))
    for name, fn in phases:
        task = ctx.progress.task(f"shops: {name}", 1)
        try:
            data[name] = await fn()
        except ProbeError as e:
            # keep the kind (a hang or crash makes the runner restart the browser)
            raise type(e)(f"shops {name}: {e}", data={**data, **e.data}) from None
        finally:
            task.close()
    for name, fn in (("manual", lambda: manual_phase(ctx, shops, data["auto"], data["hover"]["per_shop"])),
                     ("touch", lambda: touch_phase(ctx, shops))):
        task = ctx.progress.task(f"shops: {name}", 1)
        try:
            data[name] = await fn()
        except ProbeError as e:
            # Later phases failing (a demo that hangs at 16 s) keep what the earlier ones found.
            data[name] = {"error": str(e)}
        finally:
            task.close()
    return data
