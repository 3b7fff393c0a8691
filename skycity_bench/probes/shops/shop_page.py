"""One page of the shop probe: fake clock, the DOM card reader, the hook's shop list, and the
small steps every phase repeats (where to point, what is showing, evidence crops)."""

from __future__ import annotations

import asyncio
import math

import cv2
import numpy as np

from skycity_bench.browser.session import DemoPage
from skycity_bench.probes.shops.dom_cards import SCRIPT, DomCards, shop_cards
from skycity_bench.probes.shops.shop_pixels import crop_box, save_crop


def valid_shops(value) -> tuple[list[dict], list[str]]:
    """The usable entries of getShops(): id, name, finite x/y. Returns (shops, problems)."""
    problems, out = [], []
    if not isinstance(value, list):
        return [], [f"getShops() returned {type(value).__name__}, not a list"]
    for i, s in enumerate(value):
        if not isinstance(s, dict):
            problems.append(f"entry {i} is not an object")
            continue
        try:
            x, y = float(s["x"]), float(s["y"])
        except (KeyError, TypeError, ValueError):
            problems.append(f"entry {i}: x/y are not numbers")
            continue
        name = s.get("name")
        if not isinstance(name, str) or not name.strip() or not math.isfinite(x) or not math.isfinite(y):
            problems.append(f"entry {i}: missing name or non-finite position")
            continue
        out.append({"id": str(s.get("id", i)), "name": name.strip(), "x": x, "y": y})
    ids = [s["id"] for s in out]
    if len(set(ids)) != len(ids):
        problems.append("duplicate shop ids")
    return out, problems


class ShopPage:
    """The probe's page on the demo (`open`, and again for a fresh one; `close`), with its
    DOM card reader."""

    def __init__(self, ctx, *, touch: bool = False):
        self.ctx = ctx
        self.s = ctx.settings
        self.touch = touch
        self._dp: DemoPage | None = None
        self._cards: DomCards | None = None
        self.crops = 0
        self._size: tuple[int, int] | None = None

    @property
    def dp(self) -> DemoPage:
        """The open page."""
        if self._dp is None:
            raise RuntimeError("the shop page is not open (ShopPage.open)")
        return self._dp

    @property
    def cards(self) -> DomCards:
        """The open page's DOM card reader."""
        if self._cards is None:
            raise RuntimeError("the shop page is not open (ShopPage.open)")
        return self._cards

    async def open(self) -> ShopPage:
        if self._dp is not None:
            await self._dp.close()
        self._dp = await self.ctx.open_page(
            fake_clock=True, has_touch=self.touch, is_mobile=self.touch, init_scripts=[SCRIPT]
        )
        self._cards = DomCards(self._dp, self.s)
        await self._cards.base()
        self._size = None
        if self.touch:
            # is_mobile without a viewport meta tag lays the page out wider (980 px) and scales
            # it down; taps and the hook both speak layout (client) px, so bound by those.
            w, h = await self.dp.evaluate("[innerWidth, innerHeight]", what="reading the layout size")
            self._size = (int(w), int(h))
        return self

    async def close(self) -> None:
        if self._dp is not None:
            await self._dp.close()
            self._dp = None

    @property
    def size(self) -> tuple[int, int]:
        if self._size:
            return self._size
        vp = self.dp.viewport
        return vp.width, vp.height

    async def shops_now(self) -> dict[str, dict]:
        """Where each shop is at this instant (the camera may have moved)."""
        r = await self.dp.hook.call("getShops")
        shops, _ = valid_shops(r.value) if r.ok else ([], [])
        return {s["id"]: s for s in shops}

    def in_view(self, p: dict | None) -> bool:
        w, h = self.size
        m = self.s.edge_margin_px
        return p is not None and m <= p["x"] <= w - m and m <= p["y"] <= h - m

    def away_point(self, shops: list[dict]) -> tuple[float, float]:
        """The edge point furthest from every shop: where the pointer goes to leave."""
        w, h = self.size
        i = 6
        cands = [(i, i), (w - i, i), (i, h - i), (w - i, h - i), (w / 2, i), (w / 2, h - i), (i, h / 2), (w - i, h / 2)]
        if not shops:
            return cands[0]
        return max(cands, key=lambda c: min(math.hypot(c[0] - s["x"], c[1] - s["y"]) for s in shops))

    async def read(self, shops: list[dict], *, settle_css: bool = False) -> list[dict]:
        """Cards naming a shop that show now. With settle_css, wait out the cards' running CSS
        transitions/animations in real time (bounded) first: the fake clock does not drive them."""
        snap = await self.cards.read()
        if settle_css:
            pending = max([c.get("pending_ms") or 0 for c in snap.get("cards", [])] + [0])
            if pending > 0:
                await asyncio.sleep(min(pending, self.s.max_css_wait_ms) / 1000 + 0.05)
                snap = await self.cards.read()
        return shop_cards(snap, shops)

    async def read_all(self) -> list[dict]:
        snap = await self.cards.read()
        return snap.get("cards", [])

    async def active_card(self) -> dict:
        r = await self.dp.hook.call("getActiveCard")
        return {"value": r.value} if r.ok else {"error": r.error}

    def region(self, rects: list, mark=None, pad: int = 24) -> list[int] | None:
        """The viewport box around rects (and a marked point), padded: what a grab captures."""
        return crop_box(rects, self.size, pad=pad, mark=mark)

    async def grab(self, box: list[int] | None):
        """(BGR image, (x0, y0)) of a viewport box, by a clipped screenshot (a whole 1080p
        frame costs a few hundred ms on a loaded machine; a card's box a fraction)."""
        if box is None:
            return None
        png = await self.dp.screenshot_png(clip={"x": box[0], "y": box[1], "width": box[2], "height": box[3]})
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        return None if img is None else (img, (box[0], box[1]))

    async def crop(self, name: str, rects: list, mark=None, grabbed=None) -> str | None:
        """Evidence crop around rects (from `grabbed`, else a fresh grab); its file name."""
        if self.crops >= self.s.max_screenshots:
            return None
        if grabbed is None:
            grabbed = await self.grab(self.region(rects, mark))
        if grabbed is None:
            return None
        img, (ox, oy) = grabbed
        path, rel = self.ctx.file(f"shops/{name}.png")
        shifted = [[r[0] - ox, r[1] - oy, r[2], r[3]] for r in rects]
        m = None if mark is None else (mark[0] - ox, mark[1] - oy)
        if save_crop(img, shifted, path, pad=0, max_px=self.s.evidence_max_px, mark=m) is None:
            return None
        self.crops += 1
        return rel


def card_union(cards: list[dict]) -> list[float] | None:
    if not cards:
        return None
    x0 = min(c["rect"][0] for c in cards)
    y0 = min(c["rect"][1] for c in cards)
    x1 = max(c["rect"][0] + c["rect"][2] for c in cards)
    y1 = max(c["rect"][1] + c["rect"][3] for c in cards)
    return [x0, y0, x1 - x0, y1 - y0]


def overlaps(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def joined_text(cards: list[dict]) -> str:
    return " | ".join(c["text"] for c in cards)[:600]


__all__ = ["ShopPage", "valid_shops", "card_union", "overlaps", "joined_text"]
