// The independent frame sampler (rubric 流畅度), injected before any page script.
// Cheap by design: preallocated typed arrays, no allocation per frame.
// For every animation frame it keeps
//   ts[i]   the timestamp rAF passes to the callback (follows Chromium's frame clock),
//   now[i]  performance.now() on entry (shows main-thread stalls the frame clock can hide),
//   drew[i] 1 when the scene drew anything since the previous frame: a canvas 2D / WebGL
//           draw call or a DOM mutation. That is the scene's own update signal, independent
//           of rAF running: a demo can keep rAF alive while its picture stands still.
//   main[i] the main thread's time for that frame: from the sampler's callback (the first
//           of the frame: it was registered before any page script) to the first task after
//           the frame's rendering update (a message posted from the callback), i.e. the
//           page's rAF callbacks plus style, layout and paint. A late frame whose main
//           thread finished early was held up elsewhere: raster, the GPU process, the
//           compositor, or a machine without headroom.
//
// Cost inside the demo's frame: one draw call per frame is enough to know that
// the scene drew, so the instruments are armed once per frame and disarm themselves on
// their first hit. The first canvas/WebGL call of a frame goes through a wrapper that puts
// the native methods back; every later call of that frame is a plain native call. The
// MutationObserver likewise disconnects on its first record and is re-observed on the next
// frame. A demo making 12000 draw calls a frame pays for one wrapper call and a few
// property writes per frame, not for 12000 wrapper calls. (A demo that keeps a reference
// to a method taken while the wrapper was armed keeps calling the wrapper: still correct,
// only not cheaper.)
//
// Hidden from the page: the API is __SKYCITY__.frames (the bench's namespace,
// cloak.js), not a window property, and each wrapper looks native (a method, so no
// prototype; the native's name, length and toString via __SKYCITY__.native).
(() => {
  const NS = __SKYCITY__;
  if (NS.frames) return;
  const CAP = 1 << 16;                 // 18 minutes at 60 Hz
  const ts = new Float64Array(CAP);
  const now = new Float64Array(CAP);
  const drew = new Uint8Array(CAP);
  const main = new Float32Array(CAP).fill(-1);  // -1: the frame's closing task never ran
  let n = 0;
  let dirty = 0;
  // Frames in which the page made a canvas 2D / WebGL draw call, counted from injection
  // (before t = 0 too): whether the page ever painted its scene, apart from DOM mutations
  // (which parsing the document itself makes).
  let painted = 0;
  let paintedFrames = 0;
  const raf = window.requestAnimationFrame.bind(window);
  const pnow = performance.now.bind(performance);
  const defineProperty = Object.defineProperty;

  // [proto, name, native, wrapper] for every instrumented draw method.
  const slots = [];
  let armed = false;
  function hit() {
    dirty = 1;
    painted = 1;
    if (armed) disarm();
  }
  function arm() {
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      defineProperty(s[0], s[1], { value: s[3], writable: true, configurable: true, enumerable: s[4] });
    }
    armed = true;
  }
  function disarm() {
    armed = false;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      // Only put the native back where our wrapper still stands (the demo may have
      // replaced the method itself: leave its own function alone).
      if (s[0][s[1]] === s[3]) defineProperty(s[0], s[1], { value: s[2], writable: true, configurable: true, enumerable: s[4] });
    }
  }
  function wrap(proto, names) {
    if (!proto) return;
    for (const k of names) {
      const d = Object.getOwnPropertyDescriptor(proto, k);
      const f = d && d.value;
      if (typeof f !== 'function') continue;
      const w = NS.method(f, hit);
      slots.push([proto, k, f, w, d.enumerable]);
    }
  }
  const c2d = ['fillRect', 'strokeRect', 'clearRect', 'fill', 'stroke', 'drawImage', 'fillText', 'strokeText', 'putImageData'];
  wrap(window.CanvasRenderingContext2D && CanvasRenderingContext2D.prototype, c2d);
  wrap(window.OffscreenCanvasRenderingContext2D && OffscreenCanvasRenderingContext2D.prototype, c2d);
  const gl = ['drawArrays', 'drawElements', 'clear', 'drawArraysInstanced', 'drawElementsInstanced', 'drawRangeElements'];
  wrap(window.WebGLRenderingContext && WebGLRenderingContext.prototype, gl);
  wrap(window.WebGL2RenderingContext && WebGL2RenderingContext.prototype, gl);

  let observing = false;
  const mo = new MutationObserver(() => { dirty = 1; mo.disconnect(); observing = false; });
  const observe = () => {
    if (observing || !document.documentElement) return;
    mo.observe(document.documentElement, { attributes: true, childList: true, subtree: true, characterData: true });
    observing = true;
  };

  // The frame's closing task: the first one after its rendering update.
  const chan = new MessageChannel();
  let open = -1;
  chan.port1.onmessage = () => { if (open >= 0) { main[open] = pnow() - now[open]; open = -1; } };

  function tick(t) {
    const e = pnow();
    if (n < CAP) { ts[n] = t; now[n] = e; drew[n] = dirty; open = n; n++; chan.port2.postMessage(0); }
    dirty = 0;
    paintedFrames += painted;
    painted = 0;
    if (!armed) arm();
    if (!observing) observe();
    raf(tick);
  }
  arm();
  if (document.documentElement) observe(); else addEventListener('DOMContentLoaded', observe, { once: true });
  raf(tick);

  NS.frames = Object.freeze({
    count: () => n,
    painted: () => paintedFrames + painted,
    // Read [from, to) as plain arrays; the bench reads in chunks after playback.
    read: (from, to) => ({
      ts: Array.from(ts.subarray(from, Math.min(to, n))),
      now: Array.from(now.subarray(from, Math.min(to, n))),
      drew: Array.from(drew.subarray(from, Math.min(to, n))),
      main: Array.from(main.subarray(from, Math.min(to, n)), (v) => Math.round(v * 100) / 100),
    }),
  });
})();
