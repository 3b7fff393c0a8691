"""Reading shop cards from the DOM. The hook only says where a shop is; whether a
card is showing, and whose it is, is read here from what the page renders.

A *card* is a group of visible DOM elements that appeared or changed since a baseline: the
in-page script keeps, for every element, whether it was visible and what text it showed
when `base()` was taken; `cards()` then finds the visible text-bearing elements that are new
or changed and climbs from each to the outermost ancestor that is itself new or changed
(not body/html, at most `max_area` of the viewport), so a card container that was shown or
filled as a whole is read as one card. Permanent DOM labels that existed and did not change
since the baseline are not cards.

Visible = laid out (non-zero box), intersecting the viewport, `checkVisibility` with opacity
and visibility, and the product of opacities along the ancestors at least `min_opacity`.
Occlusion by a canvas above the card is NOT detected (elementFromPoint misses
pointer-events:none cards, which is how most cards are built); the evidence crops show it.

CSS transitions and animations run on the document timeline, which the fake clock does not
drive: `pending_ms` says how long the card's finite animations still run in real time, and
the probe waits that long (bounded) before it decides.
"""

from __future__ import annotations

import unicodedata

SCRIPT = r"""
(() => {
  if (__SKYCITY__.shops) return;
  const ids = new WeakMap();
  let next = 1, base = new Map();
  const idOf = (el) => { let v = ids.get(el); if (!v) { v = next++; ids.set(el, v); } return v; };
  const ownText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === 3) s += n.nodeValue;
    return s.replace(/\s+/g, ' ').trim();
  };
  const vw = () => innerWidth, vh = () => innerHeight;
  function opacityChain(el) {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity || '1');
    return o;
  }
  function visible(el, minOpacity) {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    if (r.right <= 0 || r.bottom <= 0 || r.left >= vw() || r.top >= vh()) return false;
    if (el.checkVisibility && !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
    if (getComputedStyle(el).visibility !== 'visible') return false;
    return opacityChain(el) >= minOpacity;
  }
  const text = (el) => (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 600);
  function all() {
    const out = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        out.push(el);
        if (el.shadowRoot) walk(el.shadowRoot);
        if (out.length > 6000) return;
      }
    };
    if (document.body) walk(document.body);
    return out;
  }
  function parse(c) {
    const m = c && c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  // Background behind el from computed styles: composite background colours up the ancestor
  // chain until an opaque one; null when a background image, canvas or video is in the way
  // or nothing opaque is found (then the probe measures pixels).
  function backdrop(el) {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.backgroundImage && cs.backgroundImage !== 'none') return null;
      if ((cs.backdropFilter && cs.backdropFilter !== 'none') || (cs.filter && cs.filter !== 'none')) return null;
      const c = parse(cs.backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 0.999) break; }
      if (e === document.documentElement && (!c || c[3] < 0.999)) return null;
    }
    if (!layers.length || layers[layers.length - 1][3] < 0.999) return null;
    let rgb = layers[layers.length - 1].slice(0, 3);
    for (let i = layers.length - 2; i >= 0; i--) {
      const [r, g, b, a] = layers[i];
      rgb = [r * a + rgb[0] * (1 - a), g * a + rgb[1] * (1 - a), b * a + rgb[2] * (1 - a)];
    }
    return rgb;
  }
  function pendingMs(el) {
    let ms = 0;
    for (const a of (el.getAnimations ? el.getAnimations({subtree: true}) : [])) {
      if (a.playState !== 'running') continue;
      const t = a.effect && a.effect.getComputedTiming();
      if (!t || !isFinite(t.endTime) || t.localTime === null) continue;
      ms = Math.max(ms, t.endTime - t.localTime);
    }
    return ms;
  }
  // Taken at injection, after the fake clock's own script and before the demo's: a demo
  // that replaces setInterval cannot starve the sampler.
  const setI = window.setInterval.bind(window), clearI = window.clearInterval.bind(window);
  const pnow = performance.now.bind(performance);
  let samples = [], timer = null;
  const api = {
    // A sampler on the page's own (fake) setInterval: one clock.run_for then drives every
    // sample at its exact demo time, instead of one round trip per sample.
    start(opts, everyMs) {
      api.stop();
      samples = [];
      const take = () => {
        const c = api.cards(opts).cards;
        samples.push({t: pnow(), cards: c.map((x) => ({text: x.text, rect: x.rect}))});
      };
      timer = setI(take, everyMs);
      take();
    },
    stop() { if (timer !== null) clearI(timer); timer = null; },
    take() { const s = samples; samples = []; return s; },
    base(minOpacity) {
      base = new Map();
      const area = vw() * vh();
      for (const el of all()) {
        const r = el.getBoundingClientRect();
        if (r.width * r.height > area * 0.9) continue;
        const v = visible(el, minOpacity);
        base.set(idOf(el), {v, t: v ? text(el) : ''});
      }
      return base.size;
    },
    cards(opts) {
      const {minOpacity, maxArea} = opts;
      const area = vw() * vh();
      const changed = (el) => {
        const b = base.get(ids.get(el));
        return !b || !b.v || b.t !== text(el);
      };
      const seeds = [];
      for (const el of all()) {
        if (!ownText(el) || !visible(el, minOpacity) || !changed(el)) continue;
        seeds.push(el);
      }
      const tops = new Set();
      for (const s of seeds) {
        let c = s;
        for (let p = c.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
          const r = p.getBoundingClientRect();
          if (r.width * r.height > area * maxArea || !changed(p) || !visible(p, minOpacity)) break;
          c = p;
        }
        tops.add(c);
      }
      const list = [...tops].filter((c) => ![...tops].some((o) => o !== c && o.contains(c)));
      const cards = list.map((c) => {
        const r = c.getBoundingClientRect();
        const texts = [];
        for (const el of [c, ...c.querySelectorAll('*')]) {
          const t = ownText(el);
          if (!t || !visible(el, minOpacity)) continue;
          const cs = getComputedStyle(el), er = el.getBoundingClientRect();
          texts.push({text: t.slice(0, 80), font_px: parseFloat(cs.fontSize), color: parse(cs.color),
                      opacity: opacityChain(el), backdrop: backdrop(el),
                      rect: [er.left, er.top, er.width, er.height]});
          if (texts.length >= 40) break;
        }
        return {text: text(c), tag: c.tagName.toLowerCase(), id: c.id || null,
                rect: [r.left, r.top, r.width, r.height], texts, pending_ms: pendingMs(c)};
      });
      return {cards, viewport: [vw(), vh()]};
    },
  };
  __SKYCITY__.shops = Object.freeze(api);   // the bench's hidden namespace (cloak.js)
})();
"""


def norm(s: str) -> str:
    """Compare names and card text the same way: NFKC, no whitespace, case-folded."""
    return "".join(unicodedata.normalize("NFKC", s or "").split()).casefold()


def names_in(text: str, shops: list[dict]) -> list[str]:
    """Ids of the shops whose name the text contains; a name contained in a longer name that
    also matches (茶馆 inside 云顶茶馆) is not counted on its own."""
    t = norm(text)
    hits = [s for s in shops if norm(s["name"]) and norm(s["name"]) in t]
    keep = []
    for s in hits:
        n = norm(s["name"])
        if any(o is not s and n != norm(o["name"]) and n in norm(o["name"]) for o in hits):
            continue
        keep.append(s["id"])
    return keep


def attribute(text: str, shops: list[dict]) -> str | None:
    """The one shop a card's text belongs to: its id, None (no shop name), or "ambiguous"."""
    ids = names_in(text, shops)
    if not ids:
        return None
    return ids[0] if len(ids) == 1 else "ambiguous"


def shop_cards(snapshot: dict, shops: list[dict]) -> list[dict]:
    """The cards of a `cards()` snapshot that name at least one shop, each with `shop`
    (attribute()) and `names` (every shop id named)."""
    out = []
    for c in snapshot.get("cards", []):
        ids = names_in(c["text"], shops)
        if ids:
            out.append({**c, "names": ids, "shop": ids[0] if len(ids) == 1 else "ambiguous"})
    return out


class DomCards:
    """The in-page card reader of one DemoPage (the script is injected before page scripts)."""

    def __init__(self, dp, settings):
        self.dp = dp
        self.s = settings

    async def base(self) -> None:
        await self.dp.evaluate(
            "(o) => __SKYCITY__.shops && __SKYCITY__.shops.base(o)", self.s.min_opacity, what="shop card baseline"
        )

    def _opts(self) -> dict:
        return {"minOpacity": self.s.min_opacity, "maxArea": self.s.max_card_area}

    async def start(self, every_ms: float) -> None:
        """Sample now and then every `every_ms` of demo time, inside the page."""
        await self.dp.evaluate(
            "([o, ms]) => __SKYCITY__.shops.start(o, ms)", [self._opts(), every_ms], what="starting the card sampler"
        )

    async def take(self) -> list[tuple[float, list[dict]]]:
        """The samples since the last take: (bench seconds, cards [{text, rect}])."""
        raw = await self.dp.evaluate("() => __SKYCITY__.shops.take()", what="reading the card sampler") or []
        t0 = self.dp.t0_ms or 0.0
        return [(round((x["t"] - t0) / 1000, 3), x["cards"]) for x in raw]

    async def stop(self) -> None:
        await self.dp.evaluate("() => __SKYCITY__.shops.stop()", what="stopping the card sampler")

    async def read(self) -> dict:
        snap = await self.dp.evaluate(
            "(o) => __SKYCITY__.shops ? __SKYCITY__.shops.cards(o) : {cards: [], missing: true}",
            {"minOpacity": self.s.min_opacity, "maxArea": self.s.max_card_area},
            what="reading shop cards",
        )
        return snap or {"cards": []}
