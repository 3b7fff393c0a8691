// Injected before any page script, in every page the bench opens (main world: error events
// of page scripts are only delivered there, and under the fake clock t = 0 must be read on
// the page's own clock). State lives on the bench's hidden namespace (cloak.js), not on
// window: page code cannot see it.
// Marks the bench's t = 0: the first animation frame after the demo's load event. Every
// probe measures demo time from this instant. Under the fake clock the lookups
// of requestAnimationFrame and performance.now happen at load time, so they are the fake
// ones and t0 is on the fake timeline.
(() => {
  if (__SKYCITY__.bench) return;
  const B = { t0: null, t0Raf: null, loadedAt: null, errors: [] };
  __SKYCITY__.bench = B;
  const keep = (msg) => { if (B.errors.length < 50) B.errors.push(String(msg).slice(0, 300)); };
  addEventListener('error', (e) => keep(e.message || e), true);
  addEventListener('unhandledrejection', (e) => keep('unhandled rejection: ' + (e.reason && e.reason.message || e.reason)));
  addEventListener('load', () => {
    B.loadedAt = performance.now();
    requestAnimationFrame((t) => { B.t0 = performance.now(); B.t0Raf = t; });
  }, { once: true });
})();
