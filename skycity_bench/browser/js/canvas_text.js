// Text drawn on canvases (issue 4, packaging.framing), injected before any page script:
// a stats/FPS readout or debug text painted into the scene canvas is overlay UI too, and
// only the draw calls can tell it from pixels. Keeps, per distinct string, when it was last
// drawn (performance.now(), on the fake clock when one is installed) and how often.
(() => {
  if (window.__skycityCanvasText) return;
  const seen = new Map();
  const pnow = performance.now.bind(performance);
  function wrap(proto) {
    if (!proto) return;
    for (const k of ['fillText', 'strokeText']) {
      const f = proto[k];
      if (typeof f !== 'function') continue;
      Object.defineProperty(proto, k, {
        value: function (text) {
          const s = String(text).slice(0, 120);
          if (s.trim()) {
            const e = seen.get(s);
            if (e) { e.n++; e.last = pnow(); } else if (seen.size < 2000) seen.set(s, { n: 1, last: pnow() });
          }
          return f.apply(this, arguments);
        }, writable: true, configurable: true,
      });
    }
  }
  wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype);
  wrap(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype);
  Object.defineProperty(window, '__skycityCanvasText', {
    value: Object.freeze({
      // Strings drawn within the last `ms` milliseconds.
      recent: (ms) => { const now = pnow(); const out = [];
        for (const [text, e] of seen) if (now - e.last <= ms) out.push({ text, draws: e.n });
        return out.slice(0, 100); },
    }),
    writable: false, configurable: false, enumerable: false,
  });
})();
