// The independent frame sampler (issue 2, rubric 流畅度), injected before any page script.
// Cheap by design: preallocated typed arrays, no allocation per frame.
// For every animation frame it keeps
//   ts[i]   the timestamp rAF passes to the callback (follows Chromium's frame clock),
//   now[i]  performance.now() on entry (shows main-thread stalls the frame clock can hide),
//   drew[i] 1 when the scene drew anything since the previous frame: a canvas 2D / WebGL
//           draw call or a DOM mutation. That is the scene's own update signal, independent
//           of rAF running: a demo can keep rAF alive while its picture stands still.
(() => {
  if (window.__skycityFrames) return;
  const CAP = 1 << 16;                 // 18 minutes at 60 Hz
  const ts = new Float64Array(CAP);
  const now = new Float64Array(CAP);
  const drew = new Uint8Array(CAP);
  let n = 0;
  let dirty = 0;
  const raf = window.requestAnimationFrame.bind(window);
  const pnow = performance.now.bind(performance);
  function tick(t) {
    const e = pnow();
    if (n < CAP) { ts[n] = t; now[n] = e; drew[n] = dirty; n++; }
    dirty = 0;
    raf(tick);
  }
  raf(tick);

  function wrap(proto, names) {
    if (!proto) return;
    for (const k of names) {
      const f = proto[k];
      if (typeof f !== 'function') continue;
      Object.defineProperty(proto, k, {
        value: function () { dirty = 1; return f.apply(this, arguments); },
        writable: true, configurable: true,
      });
    }
  }
  const c2d = ['fillRect', 'strokeRect', 'clearRect', 'fill', 'stroke', 'drawImage', 'fillText', 'strokeText', 'putImageData'];
  wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype, c2d);
  wrap(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype, c2d);
  const gl = ['drawArrays', 'drawElements', 'clear', 'drawArraysInstanced', 'drawElementsInstanced', 'drawRangeElements'];
  wrap(window.WebGLRenderingContext && WebGLRenderingContext.prototype, gl);
  wrap(window.WebGL2RenderingContext && WebGL2RenderingContext.prototype, gl);
  const mo = new MutationObserver(() => { dirty = 1; });
  const watch = () => mo.observe(document.documentElement, { attributes: true, childList: true, subtree: true, characterData: true });
  if (document.documentElement) watch(); else addEventListener('DOMContentLoaded', watch, { once: true });

  Object.defineProperty(window, '__skycityFrames', {
    value: Object.freeze({
      count: () => n,
      // Read [from, to) as plain arrays; the bench reads in chunks after playback.
      read: (from, to) => ({
        ts: Array.from(ts.subarray(from, Math.min(to, n))),
        now: Array.from(now.subarray(from, Math.min(to, n))),
        drew: Array.from(drew.subarray(from, Math.min(to, n))),
      }),
    }),
    writable: false, configurable: false, enumerable: false,
  });
})();
