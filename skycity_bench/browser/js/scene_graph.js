// The three.js scene graph as a locator of moving objects when a demo has no answering hook
// (density's pages only, never the real-time frame-pacing page: it does a
// little work after every render).
//
// three.js announces every WebGLRenderer and Scene it builds to browser devtools: its
// constructors dispatch an 'observe' event on a global __THREE_DEVTOOLS__ when one exists
// (every release the cache holds, r128-r187, module or inlined). The bench defines that
// target (non-enumerable), wraps each observed renderer's render(), and after every render
// notes, per scene node, when its position in the world last changed and when its position
// relative to its parent last changed (page clock). A *mover* is a node whose world position
// changed in the last `recentMs` and that is not a rigid part of a moving parent (a part keeps
// its place on its parent while the parent moves: a car's wheels and body are the car; a car
// driving on a bobbing island moves on it and is a mover of its own). Turning in place is
// not moving (windmill blades, a spinning sign), but what a turning pivot carries round is,
// unless the turning node carries most of the view (a city turned on a turntable instead of
// a camera moving round it: its rigid buildings are not movers).
// Cameras, lights, the camera's own rig and particle fields (THREE.Points: the rubric's
// 粒子/雨/云 do not count) are never movers, nor is a moving node that covers most of the
// view (a turntable or a rig carrying the city: what moves on it is looked at instead).
//
// What it answers is a claim in the hook's own shape (test-hook.md getDynamicObjects: id,
// x, y, w, h in CSS px of the viewport, visible), with `category` null: the scene graph has
// no categories. Like a hook's claim it only *locates*: density's pixel checks decide whether
// each claimed region really moved on its own (vision/verify.py), so a scene node that moves
// without visible pixels, or a page that fakes nodes, gains nothing.
(() => {
  const NS = __SKYCITY__;
  if (NS.sceneGraph) return;
  const perf = window.performance;
  // node -> {l, w: its translation (local, world) last seen, m: its world matrix; lAt, wAt,
  // mAt: page ms of their last change}
  const hist = new WeakMap();
  const renders = new Map();           // scene -> {camera, canvas, at: page ms of its last render}
  let observed = 0, failures = 0, lastError = null;

  const moved = (e, v) => {
    for (let i = 0; i < 3; i++) if (Math.abs(e[12 + i] - v[i]) > 1e-7 * (1 + Math.abs(v[i]))) return true;
    return false;
  };
  // Until armed (density chose this locator: no answering hook) only the renders are noted:
  // a demo with a hook pays nothing per frame for the watch.
  let armed = false;
  const track = (scene, camera, canvas) => {
    const now = perf.now();
    renders.set(scene, { camera, canvas, at: now });
    if (renders.size > 16) {            // a demo that builds scenes as it goes: forget the old ones
      for (const [k, r] of renders) if (now - r.at > 1000) renders.delete(k);
    }
    if (!armed) return;
    scene.traverse((node) => {
      const l = node.matrix && node.matrix.elements, w = node.matrixWorld && node.matrixWorld.elements;
      if (!l || !w) return;
      const h = hist.get(node);
      if (h === undefined) {
        hist.set(node, { l: [l[12], l[13], l[14]], w: [w[12], w[13], w[14]], m: Float64Array.from(w),
                         lAt: -Infinity, wAt: -Infinity, mAt: -Infinity });
        return;
      }
      if (moved(l, h.l)) { h.l = [l[12], l[13], l[14]]; h.lAt = now; }
      if (moved(w, h.w)) { h.w = [w[12], w[13], w[14]]; h.wAt = now; }
      for (let i = 0; i < 16; i++) {
        if (Math.abs(w[i] - h.m[i]) > 1e-7 * (1 + Math.abs(h.m[i]))) { h.m.set(w); h.mAt = now; break; }
      }
    });
  };

  const wrap = (r) => {
    const orig = r.render;
    if (typeof orig !== 'function' || orig.__skycity) return;
    const render = function (scene, camera) {
      const out = orig.apply(this, arguments);
      try {
        if (scene && typeof scene.traverse === 'function' && camera) track(scene, camera, r.domElement);
      } catch (e) { failures++; lastError = String(e && e.message || e).slice(0, 200); }
      return out;
    };
    render.__skycity = true;
    r.render = render;
    observed++;
  };

  const dev = new EventTarget();
  dev.addEventListener('observe', (ev) => {
    const o = ev.detail;
    if (o && typeof o.render === 'function' && o.domElement) wrap(o);
  });
  Object.defineProperty(window, '__THREE_DEVTOOLS__', { value: dev, enumerable: false, configurable: true, writable: true });

  // --- projection: column-major 4x4 matrices (three.js Matrix4.elements) ---
  const mul = (a, b) => {
    const o = new Float64Array(16);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      o[c * 4 + r] = s;
    }
    return o;
  };
  const contains = (node, target) => {
    for (let p = target; p; p = p.parent) if (p === node) return true;
    return false;
  };
  // the local box of a renderable node (geometry's bounding box; a sprite's unit quad)
  const localBox = (n) => {
    if (n.isPoints || n.isLight || n.isCamera) return null;
    if (n.isSprite) return [-0.5, -0.5, -0.5, 0.5, 0.5, 0.5];
    if (!(n.isMesh || n.isLine)) return null;
    let bb = null;
    if (n.isInstancedMesh) {
      if (!n.boundingBox && typeof n.computeBoundingBox === 'function') n.computeBoundingBox();
      bb = n.boundingBox;
    } else if (n.geometry) {
      if (!n.geometry.boundingBox && typeof n.geometry.computeBoundingBox === 'function') n.geometry.computeBoundingBox();
      bb = n.geometry.boundingBox;
    }
    if (!bb || !isFinite(bb.min.x) || !isFinite(bb.max.x)) return null;
    return [bb.min.x, bb.min.y, bb.min.z, bb.max.x, bb.max.y, bb.max.z];
  };
  // the CSS-px box of a subtree's visible renderables seen by the camera (the subtrees of
  // other movers left out), or null
  const screenBox = (root, vp, rect, skip) => {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity, front = 0;
    const visit = (n) => {
      if (!n.visible || (n !== root && skip.has(n))) return;
      const b = localBox(n);
      if (b) {
        const m = mul(vp, n.matrixWorld.elements);
        for (let i = 0; i < 8; i++) {
          const x = b[(i & 1) ? 3 : 0], y = b[(i & 2) ? 4 : 1], z = b[(i & 4) ? 5 : 2];
          const cw = m[3] * x + m[7] * y + m[11] * z + m[15];
          if (cw <= 1e-6) continue;                         // behind the camera
          front++;
          const nx = (m[0] * x + m[4] * y + m[8] * z + m[12]) / cw;
          const ny = (m[1] * x + m[5] * y + m[9] * z + m[13]) / cw;
          const px = rect.left + (nx + 1) / 2 * rect.width, py = rect.top + (1 - ny) / 2 * rect.height;
          if (px < x0) x0 = px; if (px > x1) x1 = px; if (py < y0) y0 = py; if (py > y1) y1 = py;
        }
      }
      for (const c of n.children) visit(c);
    };
    visit(root);
    return front ? [x0, y0, x1, y1] : null;
  };

  // The movers of every scene rendered in the last `frameMs` (the frame on screen), as claims.
  const movers = (recentMs, frameMs, worldShare) => {
    const now = perf.now();
    const out = [];
    const W = window.innerWidth, H = window.innerHeight;
    const recent = (at) => now - at <= recentMs;
    for (const [scene, r] of renders) {
      if (now - r.at > frameMs) continue;
      const cam = r.camera;
      if (!cam.projectionMatrix || !cam.matrixWorldInverse) continue;
      const vp = mul(cam.projectionMatrix.elements, cam.matrixWorldInverse.elements);
      const rect = r.canvas && r.canvas.getBoundingClientRect ? r.canvas.getBoundingClientRect()
        : { left: 0, top: 0, width: W, height: H };
      const none = new Set();
      const big = (b) => b && Math.max(0, Math.min(b[2], W) - Math.max(b[0], 0))
        * Math.max(0, Math.min(b[3], H) - Math.max(b[1], 0)) > worldShare * W * H;
      const found = [];
      // `carried`: the parent's motion carries this node when it keeps its place on the parent
      // (the parent moves, or turns with most of the view on it)
      const walk = (n, carried) => {
        if (!n.visible) return;
        const h = hist.get(n);
        const moving = n !== scene && h !== undefined && recent(h.wAt);
        const part = carried && !(h !== undefined && recent(h.lAt));
        if (moving && !part && !n.isCamera && !n.isLight && !n.isPoints && !contains(n, cam)) found.push(n);
        const turns = !moving && n !== scene && h !== undefined && recent(h.mAt);
        const carries = moving || (turns && big(screenBox(n, vp, rect, none)));
        for (const c of n.children) walk(c, carries);
      };
      walk(scene, false);
      const skip = new Set(found);
      for (const n of found) {
        const b = screenBox(n, vp, rect, skip);
        if (!b || big(b)) continue;                      // a big one: the world moves, not an object in it
        const cx = (b[0] + b[2]) / 2, cy = (b[1] + b[3]) / 2;
        out.push({ id: 'three:' + n.uuid, category: null, x: cx, y: cy, w: b[2] - b[0], h: b[3] - b[1],
                   visible: cx >= 0 && cy >= 0 && cx < W && cy < H });
      }
    }
    return out;
  };

  NS.sceneGraph = {
    // Start noting the nodes' motion; answers the state, now armed.
    arm: () => { armed = true; return NS.sceneGraph.state(); },
    // What the page has shown so far: renderers wrapped, scenes rendered, failures.
    state: () => ({ renderers: observed, scenes: renders.size, failures, last_error: lastError, armed,
                    last_render_ms: renders.size ? Math.max(...[...renders.values()].map((r) => r.at)) : null }),
    movers,
  };
})();
