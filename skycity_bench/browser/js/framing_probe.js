// DOM facts for packaging.framing, evaluated at a sample time: scrolling, the
// scene element (largest canvas, else svg/video/img) and its drawing-buffer aspect, and
// every element painted over the viewport that is not the scene: controls, text, panels,
// other canvases/images (stats.js is a small canvas in a fixed div). Hit testing decides
// what is really on top: pointer-events is forced on for the test (overlays are often
// pointer-events:none, which hit testing would otherwise skip), and transparent layers in
// the way are looked through.
// Runs in the bench's isolated world: it only reads the document, so none of the
// page's own functions run or see it (the canvas texts come from the main world, framing.py).
(excuse) => {
  const W = innerWidth, H = innerHeight;
  const de = document.documentElement, body = document.body;
  const se = document.scrollingElement || de;
  const cs = (e) => getComputedStyle(e);
  const ov = (e) => e ? [cs(e).overflowX, cs(e).overflowY] : ['visible', 'visible'];
  const clipsX = [ov(de)[0], ov(body)[0]].some((v) => v === 'hidden' || v === 'clip');
  const clipsY = [ov(de)[1], ov(body)[1]].some((v) => v === 'hidden' || v === 'clip');
  const page = {
    inner: [W, H], client: [de.clientWidth, de.clientHeight], scroll: [se.scrollWidth, se.scrollHeight],
    scrollbar: [W - de.clientWidth, H - de.clientHeight],
    scrollable_x: se.scrollWidth > W + 1 && !clipsX, scrollable_y: se.scrollHeight > H + 1 && !clipsY,
  };
  const clip = (r) => {
    const x = Math.max(0, r.left), y = Math.max(0, r.top);
    const x2 = Math.min(W, r.right), y2 = Math.min(H, r.bottom);
    return x2 > x && y2 > y ? { x, y, w: x2 - x, h: y2 - y } : null;
  };
  const shown = (e) => { const s = cs(e); return s.display !== 'none' && s.visibility !== 'hidden'; };
  function opacity(e) { let o = 1; for (let n = e; n && n.nodeType === 1; n = n.parentElement) o *= parseFloat(cs(n).opacity); return o; }

  let scene = null, best = 0;
  for (const sel of ['canvas', 'svg, video, img']) {
    for (const e of document.querySelectorAll(sel)) {
      if (!shown(e) || opacity(e) < 0.05) continue;
      const c = clip(e.getBoundingClientRect());
      const a = c ? c.w * c.h : 0;
      if (a > best && a >= 0.05 * W * H) { best = a; scene = e; }
    }
    if (scene) break;
  }
  let sceneInfo = null;
  if (scene) {
    const r = scene.getBoundingClientRect();
    const buf = scene.tagName === 'CANVAS' ? [scene.width, scene.height]
      : scene.tagName === 'VIDEO' ? [scene.videoWidth, scene.videoHeight]
      : scene.tagName === 'IMG' ? [scene.naturalWidth, scene.naturalHeight] : null;
    sceneInfo = { tag: scene.tagName.toLowerCase(), id: scene.id || '', rect: [r.left, r.top, r.width, r.height],
                  buffer: buf, object_fit: cs(scene).objectFit, visible_share: r.width * r.height ? best / (r.width * r.height) : 0 };
  }

  const alpha = (c) => { const m = /rgba?\(([^)]+)\)/.exec(c || ''); if (!m) return 0; const p = m[1].split(/[ ,/]+/).filter(Boolean); return p.length > 3 ? parseFloat(p[3]) : 1; };
  const ownText = (e) => Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
  const CONTROL = new Set(['BUTTON', 'SELECT', 'TEXTAREA', 'PROGRESS', 'METER']);
  const MEDIA = new Set(['CANVAS', 'IMG', 'SVG', 'VIDEO']);
  function why(e, s, area) {
    const tag = e.tagName.toUpperCase();
    if (CONTROL.has(tag) || (tag === 'INPUT' && e.type !== 'hidden') || e.controls || e.isContentEditable
        || /^(button|slider|checkbox|switch|menu|toolbar)$/.test(e.getAttribute('role') || '')) return 'control';
    if (ownText(e) && alpha(s.color) > 0.05 && parseFloat(s.fontSize) > 0) return 'text';
    // A second canvas as large as the viewport is a scene layer (its text is read from the
    // draw calls); a smaller one over the scene is a panel (stats.js draws into one).
    if (MEDIA.has(tag) && area >= 64 && area < 0.6 * W * H) return 'media';
    if (area < 0.6 * W * H && (alpha(s.backgroundColor) >= 0.1 || s.backgroundImage !== 'none'
        || (parseFloat(s.borderTopWidth) > 0 && alpha(s.borderTopColor) > 0.1))) return 'panel';
    return null;
  }
  const painted = (e) => { const s = cs(e); const r = e.getBoundingClientRect();
    return why(e, s, r.width * r.height) !== null || e === scene; };

  const CONTROLS = 'button, input, select, textarea, [role="button"], [role="slider"]';
  const force = document.createElement('style');
  force.textContent = '* { pointer-events: auto !important; }';
  (document.head || de).appendChild(force);
  const found = [];
  try {
    const all = body ? body.querySelectorAll('*') : [];
    for (let i = 0; i < all.length && i < 4000; i++) {
      const e = all[i];
      if (e === scene || (scene && e.contains(scene)) || /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|BR|LINK|META)$/.test(e.tagName)) continue;
      if (e.closest('svg') && e.tagName.toUpperCase() !== 'SVG') continue;
      const s = cs(e);
      if (s.display === 'none' || s.visibility === 'hidden' || opacity(e) < 0.05) continue;
      const c = clip(e.getBoundingClientRect());
      if (!c || c.w * c.h < 4) continue;
      const reason = why(e, s, c.w * c.h);
      if (!reason) continue;
      let onTop = false;
      for (let gy = 0; gy < 4 && !onTop; gy++) for (let gx = 0; gx < 4 && !onTop; gx++) {
        const px = c.x + c.w * (gx + 0.5) / 4, py = c.y + c.h * (gy + 0.5) / 4;
        for (const hit of document.elementsFromPoint(px, py)) {
          if (hit === e || e.contains(hit)) { onTop = true; break; }
          if (hit !== force && painted(hit)) break;
        }
      }
      if (!onTop) continue;
      const text = (e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80);
      found.push({ el: e, tag: e.tagName.toLowerCase(), id: e.id || '', cls: String(e.className && e.className.baseVal !== undefined ? e.className.baseVal : e.className || '').slice(0, 60),
                   text, why: reason, rect: [c.x, c.y, c.w, c.h], position: s.position,
                   // a title or a shop card is excused by its text; a panel of controls that
                   // also shows the city name is still controls over the scene
                   excused: !e.querySelector(CONTROLS) && excuse.some((x) => x && text.includes(x)) });
    }
  } finally { force.remove(); }
  // One outline per panel: drop offenders inside another offender.
  const outer = found.filter((f) => !found.some((g) => g !== f && g.el.contains(f.el)));
  return { page, scene: sceneInfo, overlays: outer.slice(0, 50).map(({ el, ...rest }) => rest) };
}
