// Text drawn on canvases (packaging.framing), injected before any page script:
// a stats/FPS readout or debug text painted into the scene canvas is overlay UI too, and
// only the draw calls can tell it from pixels. Keeps, per distinct string, when it was last
// drawn (performance.now(), on the fake clock when one is installed) and how often.
// Hidden from the page: the API is __SKYCITY__.canvasText (cloak.js) and the
// wrappers look native.
(() => {
  const NS = __SKYCITY__;
  if (NS.canvasText) return;
  const seen = new Map();
  const pnow = performance.now.bind(performance);
  const note = (text) => {
    const s = String(text).slice(0, 120);
    if (s.trim()) {
      const e = seen.get(s);
      if (e) { e.n++; e.last = pnow(); } else if (seen.size < 2000) seen.set(s, { n: 1, last: pnow() });
    }
  };
  function wrap(proto) {
    const before = (ctx, args) => { try { note(args[0]); } catch (e) { /* ignore */ } };
    NS.wrap(proto, 'fillText', before);
    NS.wrap(proto, 'strokeText', before);
  }
  wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype);
  wrap(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype);
  NS.canvasText = Object.freeze({
      // Strings drawn within the last `ms` milliseconds.
      recent: (ms) => { const now = pnow(); const out = [];
        for (const [text, e] of seen) if (now - e.last <= ms) out.push({ text, draws: e.n });
        return out.slice(0, 100); },
  });
})();
