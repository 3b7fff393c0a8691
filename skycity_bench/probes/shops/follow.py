"""A pointer that follows a moving shop, for every hover that must hold.

Every Sky City camera moves, so a pointer placed once on a shop soon rests on empty ground
and the card closes for a reason that is the bench's, not the demo's. A person hovering a
shop follows it; so does this: the fake clock advances one step (follow_step_ms, shorter
when the shop moves fast: at most follow_lag_target_px between two pointer moves, never
below follow_min_step_ms), the hook's getShops() says where the shop is now, and the real
mouse goes there in small moves (hand_step_px apart, each a real pointermove through
Playwright), as a hand would.

Raw figures per step, nothing judged here (the scorer decides):
  t_s         bench seconds after the step
  pointer     where the pointer was during the step (moved there at the end of the last one)
  hook        where getShops() says the shop is now; None when the hook lost it (hook_error
              says how: an error, a hang, the shop missing from the list)
  lag_px      pointer to hook distance: how far the shop got from the pointer in the step
  on_screen   the hook's point inside the viewport (a pointer cannot follow it off-screen)
  cards       the shop cards showing now: names and box
  under       document.elementFromPoint at the pointer (tag, id, class): what a hit lands on
  pixels      where the look of the previous step's hook point went against where the hook
              says it is now (pixels.follow_residual): a hook that lies about a shop's
              position shows as a residual that adds up step after step
  moved_to    where the pointer went for the next step
"""

from __future__ import annotations

import math

import numpy as np

from skycity_bench.probes.shops.shop_page import valid_shops
from skycity_bench.probes.shops.shop_pixels import follow_residual, patch_at

_HIT = """([x, y]) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  const cls = typeof el.className === 'string' ? el.className : (el.className && el.className.baseVal) || '';
  return {tag: el.tagName.toLowerCase(), id: el.id || null, cls: cls.slice(0, 60) || null};
}"""


class Follow:
    """The pointer on one shop while the fake clock runs. `begin()` puts it there; `run(ms)`
    keeps it there for ms of demo time; `steps` holds the record."""

    def __init__(self, pg, shop_id: str, shops: list[dict], *, cards: bool = True, pixels: bool = True):
        self.pg = pg
        self.s = pg.s
        self.shop_id = shop_id
        self.shops = shops
        self.cards = cards
        self.pixels = pixels
        self.pointer: tuple[float, float] | None = None
        self.hook: tuple[float, float] | None = None
        self.steps: list[dict] = []
        # The first step is short: the shop's speed is not known yet (then steps grow by half
        # a step up to follow_step_ms while the shop stays slow).
        self.step_ms = self.s.follow_min_step_ms
        # (patch, frac) around the last hook point, for the next step's match
        self._patch: tuple[np.ndarray, tuple[float, float]] | None = None
        self._hook_failures = 0

    async def begin(self, pos: dict) -> dict:
        """The pointer onto the shop at `pos` (the hook's position now). The look of the spot
        is taken first, before a hover can change it."""
        self.hook = (pos["x"], pos["y"])
        if self.pixels:
            await self._grab_patch(self.hook)
        await self._move(*self.hook, small=False)
        t = await self.pg.dp.now_s()
        first = {
            "t_s": round(t, 3),
            "pointer": None,
            "hook": _r(self.hook),
            "lag_px": None,
            "on_screen": self.pg.in_view(pos),
            "moved_to": _r(self.pointer),
        }
        self.steps.append(first)
        return first

    async def run(self, ms: float) -> None:
        """Follow for `ms` of demo time, step by step."""
        dp = self.pg.dp
        end = (await dp.now_s()) + ms / 1000
        while True:
            now = await dp.now_s()
            left = (end - now) * 1000
            if left < 0.5:
                return
            await self.step(min(self.step_ms, left))

    async def step(self, ms: float) -> dict:
        pg, dp = self.pg, self.pg.dp
        await dp.run_for(ms)
        t = await dp.now_s()
        cur, err = await self._where()
        hook = (cur["x"], cur["y"]) if cur else None
        rec = {
            "t_s": round(t, 3),
            "step_ms": round(ms, 1),
            "pointer": _r(self.pointer),
            "hook": _r(hook),
            "lag_px": round(math.dist(self.pointer, hook), 1) if hook and self.pointer else None,
            "on_screen": pg.in_view(cur),
        }
        if err:
            rec["hook_error"] = err
        if self.cards:
            rec["cards"] = [
                {"names": c["names"], "rect": [round(v, 1) for v in c["rect"]]} for c in await pg.read(self.shops)
            ]
        if self.pointer is not None:
            rec["under"] = await dp.evaluate(_HIT, list(self.pointer), what="hit-testing the pointer")
        if self.pixels and hook is not None:
            rec["pixels"] = await self._pixels(hook)
        if hook is not None:
            # Off-screen the pointer stops at the edge (and the scorer sees on_screen False).
            w, h = pg.size
            await self._move(min(max(hook[0], 0), w - 1), min(max(hook[1], 0), h - 1))
            self.hook = hook
        rec["moved_to"] = _r(self.pointer)
        self.steps.append(rec)
        self._adapt(rec["lag_px"], ms)
        return rec

    async def _where(self) -> tuple[dict | None, str | None]:
        """The shop's entry in getShops() now, or why not. After two failed calls in a row
        the hook is not asked again (a hanging hook would cost its timeout every step)."""
        if self._hook_failures >= 2:
            return None, "not asked: getShops() failed twice in a row"
        r = await self.pg.dp.hook.call("getShops")
        if not r.ok:
            self._hook_failures += 1
            return None, f"getShops(): {r.error}"[:200]
        self._hook_failures = 0
        shops, _ = valid_shops(r.value)
        cur = next((x for x in shops if x["id"] == self.shop_id), None)
        return cur, None if cur else f"getShops() no longer lists {self.shop_id}"

    def _adapt(self, lag: float | None, ms: float) -> None:
        """Shorter steps while the shop moves fast, longer again when it slows. Frames come
        every 16 ms, so one short step may hold no frame (no motion) and the next two: the
        speed is the hook's path over the last >= 100 ms (or this step's, when faster), and
        a step grows by at most half, so the step size does not swing with the frames."""
        s = self.s
        speed = (lag or 0.0) / max(ms, 1e-3)
        dist = span = 0.0
        pts = [x for x in self.steps if x.get("hook")]
        for a, b in zip(reversed(pts[:-1]), reversed(pts)):
            dist += math.dist(a["hook"], b["hook"])
            span += (b["t_s"] - a["t_s"]) * 1000
            if span >= 100:
                break
        if span > 0:
            speed = max(speed, dist / span)
        want = s.follow_lag_target_px / speed if speed > 0 else s.follow_step_ms
        self.step_ms = max(s.follow_min_step_ms, min(s.follow_step_ms, self.step_ms * 1.5, want))

    async def _move(self, x: float, y: float, *, small: bool = True) -> None:
        """The real mouse to (x, y): in moves at most hand_step_px apart, or in one."""
        n = 1
        if small and self.pointer is not None:
            n = max(1, math.ceil(math.dist(self.pointer, (x, y)) / self.s.hand_step_px))
        await self.pg.dp.call(self.pg.dp.page.mouse.move(x, y, steps=n), 10, "moving the mouse")
        self.pointer = (x, y)

    def _box(self, a, b) -> list[int] | None:
        r = self.s.pixel_patch_px + self.s.pixel_search_px
        x0, x1 = min(a[0], b[0]) - r, max(a[0], b[0]) + r
        y0, y1 = min(a[1], b[1]) - r, max(a[1], b[1]) + r
        return self.pg.region([[x0, y0, x1 - x0, y1 - y0]], pad=1)

    async def _grab_patch(self, point) -> None:
        g = await self.pg.grab(self._box(point, point))
        self._patch = patch_at(g[0], g[1], point, self.s.pixel_patch_px) if g else None

    async def _pixels(self, hook) -> dict | None:
        """Match the last step's patch in a grab that holds both hook points and the search
        margin; then take this step's patch for the next."""
        prev_point, prev = self.hook, self._patch
        if prev_point is None:
            return None
        g = await self.pg.grab(self._box(prev_point, hook))
        if g is None:
            self._patch = None
            return None
        img, origin = g
        out = follow_residual(prev, prev_point, img, origin, hook) if prev is not None else None
        self._patch = patch_at(img, origin, hook, self.s.pixel_patch_px)
        return out

    def summary(self) -> dict:
        """Raw totals for the evidence: steps, the largest lag, the path."""
        lags = [x["lag_px"] for x in self.steps if x.get("lag_px") is not None]
        return {
            "steps": len(self.steps),
            "max_lag_px": max(lags) if lags else None,
            "path": [[x["t_s"], *(x["moved_to"] or [None, None])] for x in self.steps],
        }


def _r(p) -> list[float] | None:
    return None if p is None else [round(p[0], 1), round(p[1], 1)]


__all__ = ["Follow"]
