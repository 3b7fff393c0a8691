// The bench's main-world prelude: the first bench script in every
// document, after Playwright's fake clock when a page has one, before any page script.
//
// 1. The namespace. `const __SKYCITY__` is a binding of the global lexical scope, not a
//    property of window: no enumeration lists it, and its real name is random per page
//    (world.py). Every other bench script keeps its API on it (__SKYCITY__.bench, .frames…).
// 2. Native-looking wrappers. Function.prototype.toString becomes a Proxy of itself that
//    answers "function NAME() { [native code] }" for the functions registered with
//    native(); everything else (and toString of toString) gets the real answer. wrap()
//    replaces a method by a wrapper with the original's name, length, property attributes
//    and no `prototype` (methods, like natives, have none); ctor() wraps a constructor in a
//    Proxy (name, length, prototype and statics are the native's own) and points
//    prototype.constructor at it, so `x.constructor === AudioContext` still holds.
// 3. The fake clock's traces (fake-clock pages only): what Playwright's clock leaves that
//    can be made to look native is (names, lengths, sources, enumerability, Date.isFake,
//    the Symbol it stores on every Event); what cannot is listed in the README
//    (section stealth) with why.
const __SKYCITY__ = (() => {
  const FPT = Function.prototype.toString;
  const apply = Reflect.apply, construct = Reflect.construct;
  const defineProperty = Object.defineProperty, getDesc = Object.getOwnPropertyDescriptor;
  const masks = new WeakMap();
  const capture = Error.captureStackTrace;
  // A native's error has no frame of the bench's: drop the wrapper's (and everything above
  // it) from an error on its way out, as if the native had thrown it.
  const clean = (e, fn) => { try { if (e instanceof Error) capture(e, fn); } catch (_) { /* keep it */ } };
  const trap = {
    apply(target, self, args) {
      if (typeof self === 'function') {
        const s = masks.get(self);
        if (s !== undefined) return s;
      }
      try { return apply(target, self, args); } catch (e) { clean(e, trap.apply); throw e; }
    },
  };
  const toString = new Proxy(FPT, trap);
  masks.set(toString, 'function toString() { [native code] }');
  defineProperty(Function.prototype, 'toString', { value: toString });

  // f looks like the native `name` of `length` arguments.
  function native(f, name, length) {
    masks.set(f, 'function ' + name + '() { [native code] }');
    if (f.name !== name) defineProperty(f, 'name', { value: name });
    if (length !== undefined && f.length !== length) defineProperty(f, 'length', { value: length });
    return f;
  }
  // A wrapper of the native method `orig` that calls before(this, arguments) first: a method
  // (no prototype, like a native), with the native's name, length and source, and errors
  // thrown by the native come out without the wrapper's stack frame. `before` must not throw.
  function method(orig, before) {
    const key = orig.name;
    const w = { [key]() {
      before(this, arguments);
      try { return apply(orig, this, arguments); } catch (e) { clean(e, w); throw e; }
    } }[key];
    return native(w, key, orig.length);
  }
  // obj[key] = fn (a method or an arrow), looking like the function it replaces; keeps the
  // property's attributes.
  function replace(obj, key, fn) {
    const d = obj && getDesc(obj, key);
    if (!d || typeof d.value !== 'function') return null;
    native(fn, d.value.name || key, d.value.length);
    defineProperty(obj, key, { value: fn, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
    return fn;
  }
  const wrap = (obj, key, before) => {
    const d = obj && getDesc(obj, key);
    return d && typeof d.value === 'function' ? replace(obj, key, method(d.value, before)) : null;
  };
  // obj[key] (a constructor) becomes a Proxy that calls made(instance) after each `new`
  // (and args(arguments) first, when given, to change the arguments).
  function ctor(obj, key, made, args) {
    const C = obj && obj[key];
    if (typeof C !== 'function') return null;
    const P = new Proxy(C, {
      construct(target, argv, newTarget) {
        let o;
        try {
          o = construct(target, args === undefined ? argv : args(argv), newTarget === P ? target : newTarget);
        } catch (e) { clean(e, P); throw e; }
        try { made(o); } catch (e) { /* never disturb the demo */ }
        return o;
      },
    });
    masks.set(P, 'function ' + C.name + '() { [native code] }');
    defineProperty(obj, key, { ...getDesc(obj, key), value: P });
    const pc = C.prototype && getDesc(C.prototype, 'constructor');
    if (pc && pc.value === C) defineProperty(C.prototype, 'constructor', { ...pc, value: P });
    return P;
  }
  // A getter replaced by get(self, nativeGetter), looking like the native getter.
  function getter(obj, key, get) {
    const d = obj && getDesc(obj, key);
    if (!d || typeof d.get !== 'function') return;
    const g = d.get;
    const w = getDesc({ get [key]() { return get(this, g); } }, key).get;
    defineProperty(obj, key, { ...d, get: native(w, 'get ' + key, 0) });
  }

  // Another realm's Function.prototype.toString (a same-origin iframe's, the usual way past a
  // patched one) answers for the bench's functions too: patched when the page reaches the
  // frame's window through contentWindow / contentDocument.
  const cloaked = new WeakSet();
  function cloakRealm(w) {
    try {
      const F = w && w.Function;
      if (!F || F === Function || cloaked.has(F)) return;
      cloaked.add(F);
      const inner = F.prototype.toString;
      const p = new Proxy(inner, {
        apply(target, self, args) {
          if (typeof self === 'function') { const s = masks.get(self); if (s !== undefined) return s; }
          try { return apply(target, self, args); } catch (e) { clean(e, trap.apply); throw e; }
        },
      });
      masks.set(p, 'function toString() { [native code] }');
      defineProperty(F.prototype, 'toString', { value: p });
    } catch (e) { /* cross-origin: its toString cannot read ours anyway */ }
  }
  const IF = window.HTMLIFrameElement && HTMLIFrameElement.prototype;
  getter(IF, 'contentWindow', (self, g) => { const v = apply(g, self, []); if (v) cloakRealm(v); return v; });
  getter(IF, 'contentDocument', (self, g) => { const v = apply(g, self, []); if (v) cloakRealm(v.defaultView); return v; });

  // The window's outer size. With the viewport emulated (as the bench does, for exact
  // pixels), Chromium reports the window as exactly the viewport: outerHeight ==
  // innerHeight, a window with no browser UI. An ordinary Chrome window has its toolbar on
  // top; this Chromium's own headless window reports __SKYCITY_UI_PX__ px of it, and the screen
  // the bench emulates is that much taller than the viewport (session.open_page).
  // Early in a new page's first document the emulated window can still report 0 x 0, which
  // no ordinary window does: the size it is about to have stands in.
  getter(window, 'outerHeight', (self, g) => {
    const v = apply(g, self, []);
    return v === innerHeight || v === 0 ? innerHeight + __SKYCITY_UI_PX__ : v;
  });
  getter(window, 'outerWidth', (self, g) => { const v = apply(g, self, []); return v === 0 ? innerWidth : v; });

  function hideClock() {
    const W = window, B = (W.__pwClock && W.__pwClock.builtins) || {};
    const pc = getDesc(W, '__pwClock');
    if (pc && pc.enumerable) defineProperty(W, '__pwClock', { enumerable: false });
    for (const k of ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'requestAnimationFrame',
                     'cancelAnimationFrame', 'requestIdleCallback', 'cancelIdleCallback']) {
      if (typeof W[k] === 'function' && typeof B[k] === 'function' && W[k] !== B[k]) native(W[k], k, B[k].length);
    }
    // Playwright's rAF / rIC throw their own Error for a missing callback; the native throws
    // a TypeError with Blink's wording.
    for (const k of ['requestAnimationFrame', 'requestIdleCallback']) {
      const fake = W[k];
      if (typeof fake !== 'function' || typeof B[k] !== 'function' || fake === B[k]) continue;
      const api = { [k](cb) {
        if (typeof cb !== 'function') {
          const e = new TypeError("Failed to execute '" + k + "' on 'Window': " + (arguments.length
            ? 'parameter 1 is not of type \'Function\'.' : '1 argument required, but only 0 present.'));
          clean(e, api[k]);
          throw e;
        }
        return apply(fake, this, arguments);
      } };
      replace(W, k, api[k]);
    }
    const D = W.Date;
    if (D && D.isFake) {
      delete D.isFake;
      if (Object.prototype.hasOwnProperty.call(D, 'toString')) delete D.toString;
      native(D, 'Date', 7);
      if (typeof D.now === 'function') native(D.now, 'now', 0);
      for (const k of ['now', 'parse', 'UTC']) if (getDesc(D, k)) defineProperty(D, k, { enumerable: false });
      defineProperty(D.prototype, 'constructor', { value: D, writable: true, enumerable: false, configurable: true });
    }
    const P = W.performance;
    if (P && W.Performance && !(P instanceof W.Performance)) {
      const proto = W.Performance.prototype;
      Object.setPrototypeOf(P, proto);
      for (const k of Object.keys(P)) {
        const d = getDesc(P, k), nd = getDesc(proto, k);
        if (typeof d.value === 'function') native(d.value, k, nd && typeof nd.value === 'function' ? nd.value.length : 0);
        if (d.get) native(d.get, 'get ' + k, 0);
        defineProperty(P, k, { enumerable: false });
      }
    }
    // Playwright keeps each event's fake timeStamp under a Symbol on the event itself.
    const perf = W.performance;
    const stamps = new WeakMap();
    const ts = getDesc(W.Event.prototype, 'timeStamp');
    if (ts && ts.get && !/\[native code\]/.test(apply(FPT, ts.get, []))) {
      const get = getDesc({ get timeStamp() {
        let v = stamps.get(this);
        if (v === undefined) { v = perf.now(); stamps.set(this, v); }
        return v;
      } }, 'timeStamp').get;
      defineProperty(W.Event.prototype, 'timeStamp', { ...ts, get: native(get, 'get timeStamp', 0) });
    }
    const I = W.Intl;
    if (I && !Object.prototype.hasOwnProperty.call(I, Symbol.toStringTag)) {
      defineProperty(I, Symbol.toStringTag, { value: 'Intl', configurable: true });
      for (const k of Object.keys(I)) defineProperty(I, k, { enumerable: false });
      const F = I.DateTimeFormat;
      if (typeof F === 'function' && !/\[native code\]/.test(apply(FPT, F, []))) {
        native(F, 'DateTimeFormat', 0);
        const fmt = getDesc(F.prototype, 'format');
        if (fmt && fmt.get) native(fmt.get, 'get format', 0);
        if (typeof F.prototype.formatToParts === 'function') native(F.prototype.formatToParts, 'formatToParts', 1);
      }
    }
    const AS = W.AbortSignal;
    if (AS && typeof AS.timeout === 'function' && !/\[native code\]/.test(apply(FPT, AS.timeout, []))) native(AS.timeout, 'timeout', 1);
    const T = W.Temporal;
    if (T && T.Now) {
      for (const k of Object.getOwnPropertyNames(T.Now)) {
        const f = T.Now[k];
        if (typeof f === 'function' && !/\[native code\]/.test(apply(FPT, f, []))) native(f, k, 0);
      }
    }
  }
  try { if (window.Date && window.Date.isFake) hideClock(); } catch (e) { /* never disturb the demo */ }

  return { native, method, replace, wrap, ctor, getter, clean };
})();
