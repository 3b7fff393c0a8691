// The closed network for WebSockets, in the main world of every page: Playwright's
// WebSocket routing would replace WebSocket with a JavaScript mock and leave four globals on
// window, and CDP's URL blocking needs a Network agent on the bench's session, which stalls
// pages that open popups. So every WebSocket the page opens is pointed at a closed loopback
// port (127.0.0.1:9, the same dead end as the proxy), where it fails as a blocked connection
// does (error, close 1006). The page still reads its own URL from `url`; the bench reads the
// original from the dead-end URL (session.py records it as a blocked request).
(() => {
  const NS = __SKYCITY__;
  if (NS.noWebSocket) return;
  NS.noWebSocket = true;
  const DEAD = 'ws://127.0.0.1:9/skycity-blocked?u=';
  const real = new WeakMap();
  const P = NS.ctor(window, 'WebSocket', (ws) => {}, (args) => {
    if (args.length === 0) return args;          // let the native complain as it does
    let url;
    try { url = String(args[0]); } catch (e) { return args; }
    const out = Array.prototype.slice.call(args);
    out[0] = DEAD + encodeURIComponent(url);
    return out;
  });
  if (!P) return;
  const proto = window.WebSocket.prototype;
  const origUrl = (ws, g) => {
    const u = Reflect.apply(g, ws, []);
    if (typeof u === 'string' && u.startsWith(DEAD)) {
      try { return new URL(decodeURIComponent(u.slice(DEAD.length)), location.href).href; } catch (e) { return u; }
    }
    return u;
  };
  NS.getter(proto, 'url', origUrl);
})();
