"""Is the city's name (the hook's cityName) on screen in the closing shot?

Two kinds of evidence, neither of which trusts the hook beyond the name itself:
- page text: the innermost elements whose text contains the name, inside the viewport and
  not hidden by style, and then pixels decide: the clip around them is captured as shown
  and again with the elements hidden (visibility: hidden), and the share of pixels that
  changed is recorded. A name covered by a canvas, transparent, or off-screen changes nothing.
- canvas text: fillText/strokeText on 2D contexts are wrapped before any page script runs
  (CANVAS_TEXT_JS); calls that draw the name (or characters of it, for demos that draw it
  one character at a time) are logged with their on-screen position. The bench cannot read
  pixels of canvas text, so this is reported as "drawn on a canvas" and left to reviewers;
  an OffscreenCanvas or a detached canvas usually means a WebGL texture.

Raw figures only: whether the name counts as visible is judged in scorers/city_name.py (its
threshold in the scenario's `scorers: city_name:`), so `rescore` can re-judge a stored run.
"""

from __future__ import annotations

import numpy as np

from skycity_bench.probes._stepper import decode

# Injected before page scripts. Logs only texts that are the name or part of it, once the
# probe has told it the name (__SKYCITY__.nameText.want), so the log stays small. Hidden from
# the page: state on the bench's namespace (cloak.js), native-looking wrappers.
CANVAS_TEXT_JS = r"""
(() => {
  const NS = __SKYCITY__;
  if (NS.nameText) return;
  const L = { want: null, hits: [] };
  NS.nameText = L;
  const norm = (s) => String(s == null ? '' : s).replace(/\s+/g, '');
  const wrap = (proto) => {
    if (!proto) return;
    for (const m of ['fillText', 'strokeText']) {
      NS.wrap(proto, m, (ctx, args) => {
        const text = args[0], x = args[1], y = args[2];
        try {
          const s = norm(text);
          if (L.want && s && (s.includes(L.want) || L.want.includes(s)) && L.hits.length < 400) {
            const c = ctx.canvas, onscreen = !!(c && c.isConnected && c.getBoundingClientRect);
            let sx = null, sy = null;
            if (onscreen) {
              const t = ctx.getTransform(), r = c.getBoundingClientRect();
              const px = t.a * x + t.c * y + t.e, py = t.b * x + t.d * y + t.f;
              sx = r.left + px * r.width / (c.width || 1); sy = r.top + py * r.height / (c.height || 1);
            }
            L.hits.push({ t: performance.now(), text: s.slice(0, 40), full: s.includes(L.want), onscreen, x: sx, y: sy });
          }
        } catch (e) { /* never disturb the demo */ }
      });
    }
  };
  wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype);
  wrap(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype);
})();
"""

# The innermost elements whose text holds the name, with what style says about them. Marks
# them with data-skycity-name so the pixel check can hide exactly these.
_FIND = r"""(name) => {
  const norm = (s) => String(s || '').replace(/\s+/g, '');
  const want = norm(name);
  const root = document.body || document.documentElement;
  const out = [];
  if (!want || !root) return out;
  document.querySelectorAll('[data-skycity-name]').forEach((e) => e.removeAttribute('data-skycity-name'));
  const all = root.querySelectorAll('*');
  for (const el of all) {
    if (out.length >= 8) break;
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'noscript' || tag === 'title') continue;
    if (!norm(el.textContent).includes(want)) continue;
    let inner = false;
    for (const ch of el.children) if (norm(ch.textContent).includes(want)) { inner = true; break; }
    if (inner) continue;
    const r = el.getBoundingClientRect();
    let opacity = 1, hidden = false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      opacity *= parseFloat(cs.opacity || '1');
      if (cs.display === 'none') hidden = true;
      if (e === el && cs.visibility !== 'visible') hidden = true;
    }
    const x0 = Math.max(0, r.left), y0 = Math.max(0, r.top);
    const x1 = Math.min(innerWidth, r.right), y1 = Math.min(innerHeight, r.bottom);
    const k = out.length;
    el.setAttribute('data-skycity-name', String(k));
    out.push({ k, tag, text: norm(el.textContent).slice(0, 60), hidden, opacity: Math.round(opacity * 1000) / 1000,
               rect: [r.left, r.top, r.width, r.height], in_viewport: x1 > x0 && y1 > y0,
               clip: [x0, y0, Math.max(0, x1 - x0), Math.max(0, y1 - y0)] });
  }
  return out;
}"""

_HIDE = r"""(hide) => {
  for (const el of document.querySelectorAll('[data-skycity-name]')) {
    if (hide) {
      el.dataset.skycityStyle = el.getAttribute('style') || '';
      el.style.setProperty('transition', 'none', 'important');
      el.style.setProperty('visibility', 'hidden', 'important');
    } else {
      const s = el.dataset.skycityStyle;
      if (s) el.setAttribute('style', s); else el.removeAttribute('style');
      delete el.dataset.skycityStyle;
      el.removeAttribute('data-skycity-name');
    }
  }
  return document.body ? document.body.getBoundingClientRect().width : 0;
}"""

_TAKE_CANVAS = "() => { const L = __SKYCITY__.nameText; if (!L) return null; return L.hits.splice(0); }"


async def arm(dp, name: str) -> None:
    """Tell the canvas wrapper which name to watch for."""
    await dp.evaluate(
        "(n) => { if (__SKYCITY__.nameText) __SKYCITY__.nameText.want = n.replace(/\\s+/g, ''); }",
        name,
        what="arming the canvas text log",
    )


async def check(dp, stepper, name: str, t_s: float, diff_level: int) -> dict:
    """One look at the screen at bench time t_s (the clock is paused meanwhile): raw figures
    (the shape is documented in scorers/city_name.py). A pixel counts as changed when hiding
    the name moves one of its channels by more than `diff_level`."""
    found = await dp.evaluate(_FIND, name, what="looking for the city name in the page") or []
    out: dict = {
        "t_s": round(t_s, 3),
        "dom_elements": len(found),
        "changed_share": 0.0,
        "diff_level": diff_level,
        "elements": found[:4],
    }
    shown = [f for f in found if f["in_viewport"] and not f["hidden"] and f["opacity"] > 0.02]
    if shown:
        x0 = min(f["clip"][0] for f in shown)
        y0 = min(f["clip"][1] for f in shown)
        x1 = max(f["clip"][0] + f["clip"][2] for f in shown)
        y1 = max(f["clip"][1] + f["clip"][3] for f in shown)
        vp = dp.viewport
        box = {"x": max(0, x0 - 4), "y": max(0, y0 - 4)}
        box["width"] = max(1, min(vp.width, x1 + 4) - box["x"])
        box["height"] = max(1, min(vp.height, y1 + 4) - box["y"])
        try:
            a = decode(await stepper.capture("png", clip=box))
            await dp.evaluate(_HIDE, True, what="hiding the city name")
            b = decode(await stepper.capture("png", clip=box))
        finally:
            await dp.evaluate(_HIDE, False, what="restoring the city name")
        if a.shape == b.shape:
            diff = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
            out["changed_share"] = round(float(np.mean(diff > diff_level)), 4)
        out["clip"] = box
    hits = await dp.evaluate(_TAKE_CANVAS, what="reading the canvas text log") or []
    chars = set("".join(h["text"] for h in hits))
    out["canvas"] = {
        "calls": len(hits),
        "full_name": any(h["full"] for h in hits),
        "all_characters": bool(hits) and set(name.replace(" ", "")) <= chars,
        "onscreen": any(h["onscreen"] for h in hits),
        "offscreen_only": bool(hits) and not any(h["onscreen"] for h in hits),
        "where": next(([round(h["x"]), round(h["y"])] for h in hits if h["onscreen"] and h["x"] is not None), None),
    }
    return out
