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
// no categories, and two things only the scene knows: `fixed_to_camera` (its place in the
// camera's frame stood still while it moved in the world: a chase camera's subject, or a
// node carried with the camera) and, for a claim in view at least `minPx` long, `rays`
// ({points, on, covered}: how many of five points of its box were tested, lay on it, and
// were covered by something nearer; see `rays` below). Like a hook's claim it only *locates*: density's pixel checks decide whether
// each claimed region really moved on its own (vision/verify.py), so a scene node that moves
// without visible pixels, or a page that fakes nodes, gains nothing.
(() => {
  const NS = __SKYCITY__;
  if (NS.sceneGraph) return;
  const perf = window.performance;
  // node -> {l, w, v: its translation (local, world, in the camera's frame) last seen, m: its
  // world matrix; lAt, wAt, mAt, vAt: page ms of their last change}
  const hist = new WeakMap();
  const renders = new Map();           // scene -> {camera, canvas, at: page ms of its last render}
  let observed = 0, failures = 0, lastError = null;

  const apart = (a, b) => {
    for (let i = 0; i < 3; i++) if (Math.abs(a[i] - b[i]) > 1e-7 * (1 + Math.abs(b[i]))) return true;
    return false;
  };
  const moved = (e, v) => {
    for (let i = 0; i < 3; i++) if (Math.abs(e[12 + i] - v[i]) > 1e-7 * (1 + Math.abs(v[i]))) return true;
    return false;
  };
  // a node's translation in the camera's frame (the camera's matrixWorldInverse `c` times
  // the node's world translation): unchanged while its world position changes, the node is
  // fixed to the camera (carried with it, or set beside it every frame)
  const viewOf = (c, w) => [0, 1, 2].map((r) => c[r] * w[12] + c[4 + r] * w[13] + c[8 + r] * w[14] + c[12 + r]);
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
    const view = camera.matrixWorldInverse && camera.matrixWorldInverse.elements;
    scene.traverse((node) => {
      const l = node.matrix && node.matrix.elements, w = node.matrixWorld && node.matrixWorld.elements;
      if (!l || !w) return;
      const h = hist.get(node);
      if (h === undefined) {
        hist.set(node, { l: [l[12], l[13], l[14]], w: [w[12], w[13], w[14]], m: Float64Array.from(w),
                         v: view ? viewOf(view, w) : null, lAt: -Infinity, wAt: -Infinity, mAt: -Infinity,
                         vAt: -Infinity });
        return;
      }
      if (moved(l, h.l)) { h.l = [l[12], l[13], l[14]]; h.lAt = now; }
      if (moved(w, h.w)) {
        h.w = [w[12], w[13], w[14]]; h.wAt = now;
        // only a node that moves in the world can be fixed to the camera: its place in the
        // camera's frame is read when it moves
        const v = view ? viewOf(view, w) : null;
        if (!v || !h.v || apart(v, h.v)) { h.v = v; h.vAt = now; }
      }
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
  const geometryBox = (g) => {
    if (!g) return null;
    if (!g.boundingBox && typeof g.computeBoundingBox === 'function') g.computeBoundingBox();
    const bb = g.boundingBox;
    if (!bb || !isFinite(bb.min.x) || !isFinite(bb.max.x)) return null;
    return [bb.min.x, bb.min.y, bb.min.z, bb.max.x, bb.max.y, bb.max.z];
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

  // --- what of a claim a viewer can see: rays from the camera through several points of its
  // projected box (its centre and four corners inset to a quarter of its size). At each point
  // the ray's first hit on the claimed subtree's own triangles is its depth there (no hit: the
  // point is off its outline and says nothing); the point is covered when a triangle of
  // anything else drawn meets the ray nearer. One point could be a lamp post in front of a
  // car; the claim is covered only when every point on it is (vision/settle.py decides with
  // that). Transparent (opacity under a half), unwritten and invisible materials, points,
  // lines and sprites cover nothing; a node of more than MAX_TRIS triangles is not tested
  // (it covers nothing rather than slowing every call).
  const MAX_TRIS = 20000, MAX_BLOCKERS = 100000, CELL = 32, INSET = 0.25;
  const inv = (m) => {                  // the inverse of a column-major 4x4 matrix, or null
    const [a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33] = m;
    const b00 = a00 * a11 - a01 * a10, b01 = a00 * a12 - a02 * a10, b02 = a00 * a13 - a03 * a10;
    const b03 = a01 * a12 - a02 * a11, b04 = a01 * a13 - a03 * a11, b05 = a02 * a13 - a03 * a12;
    const b06 = a20 * a31 - a21 * a30, b07 = a20 * a32 - a22 * a30, b08 = a20 * a33 - a23 * a30;
    const b09 = a21 * a32 - a22 * a31, b10 = a21 * a33 - a23 * a31, b11 = a22 * a33 - a23 * a32;
    const det = b00 * b11 - b01 * b10 + b02 * b09 + b03 * b08 - b04 * b07 + b05 * b06;
    if (!det) return null;
    const d = 1 / det;
    return [
      (a11 * b11 - a12 * b10 + a13 * b09) * d, (a02 * b10 - a01 * b11 - a03 * b09) * d,
      (a31 * b05 - a32 * b04 + a33 * b03) * d, (a22 * b04 - a21 * b05 - a23 * b03) * d,
      (a12 * b08 - a10 * b11 - a13 * b07) * d, (a00 * b11 - a02 * b08 + a03 * b07) * d,
      (a32 * b02 - a30 * b05 - a33 * b01) * d, (a20 * b05 - a22 * b02 + a23 * b01) * d,
      (a10 * b10 - a11 * b08 + a13 * b06) * d, (a01 * b08 - a00 * b10 - a03 * b06) * d,
      (a30 * b04 - a31 * b02 + a33 * b00) * d, (a21 * b02 - a20 * b04 - a23 * b00) * d,
      (a11 * b07 - a10 * b09 - a12 * b06) * d, (a00 * b09 - a01 * b07 + a02 * b06) * d,
      (a31 * b01 - a30 * b03 - a32 * b00) * d, (a20 * b03 - a21 * b01 + a22 * b00) * d,
    ];
  };
  const apply = (m, x, y, z, w) => [0, 1, 2, 3].map((r) => m[r] * x + m[4 + r] * y + m[8 + r] * z + m[12 + r] * w);
  // the world ray through CSS px (px, py): origin on the near plane, dir to the far plane
  // (t in [0, 1] runs from one to the other, linear in distance; affine maps keep t)
  const rayAt = (ivp, rect, px, py) => {
    const nx = (px - rect.left) / rect.width * 2 - 1, ny = 1 - (py - rect.top) / rect.height * 2;
    const a = apply(ivp, nx, ny, -1, 1), b = apply(ivp, nx, ny, 1, 1);
    const o = [a[0] / a[3], a[1] / a[3], a[2] / a[3]];
    return { o, d: [b[0] / b[3] - o[0], b[1] / b[3] - o[1], b[2] / b[3] - o[2]] };
  };
  const drawn = (n) => {
    const ms = Array.isArray(n.material) ? n.material : [n.material];
    return ms.some((m) => m && m.visible !== false && m.colorWrite !== false && !(m.transparent && m.opacity < 0.5));
  };
  // the nearest t in (0, tMax) where the ray meets `g`'s triangles under world matrix `m`
  // (its inverse `im`), honouring the material's side; Infinity when it does not
  const hitMesh = (n, m, im, ray, tMax) => {
    const g = n.geometry, pos = g && g.attributes && g.attributes.position;
    if (!pos || !im) return Infinity;
    const idx = g.index, count = idx ? idx.count : pos.count;
    if (count / 3 > MAX_TRIS) return Infinity;
    const [ox, oy, oz] = apply(im, ray.o[0], ray.o[1], ray.o[2], 1);
    const [dx, dy, dz] = apply(im, ray.d[0], ray.d[1], ray.d[2], 0);
    const mat = Array.isArray(n.material) ? n.material[0] : n.material;
    // a mirrored node (negative determinant) turns its faces round
    const mir = (m[0] * (m[5] * m[10] - m[6] * m[9]) - m[4] * (m[1] * m[10] - m[2] * m[9])
                 + m[8] * (m[1] * m[6] - m[2] * m[5])) < 0;
    const side = mat && mat.side === 2 ? 2 : ((mat && mat.side === 1) !== mir ? 1 : 0);
    let best = Infinity;
    const v = (i) => { const k = idx ? idx.getX(i) : i; return [pos.getX(k), pos.getY(k), pos.getZ(k)]; };
    for (let i = 0; i + 2 < count; i += 3) {
      const [ax, ay, az] = v(i), [bx, by, bz] = v(i + 1), [cx, cy, cz] = v(i + 2);
      const e1x = bx - ax, e1y = by - ay, e1z = bz - az, e2x = cx - ax, e2y = cy - ay, e2z = cz - az;
      const nx = e1y * e2z - e1z * e2y, ny = e1z * e2x - e1x * e2z, nz = e1x * e2y - e1y * e2x;
      const ddn = dx * nx + dy * ny + dz * nz;
      if (ddn === 0 || (side === 0 && ddn > 0) || (side === 1 && ddn < 0)) continue;
      const sx = ox - ax, sy = oy - ay, sz = oz - az;
      const sgn = ddn > 0 ? 1 : -1, ad = Math.abs(ddn);
      // barycentric u, v and the distance t (three.js Ray.intersectTriangle's form)
      const qx = sy * e2z - sz * e2y, qy = sz * e2x - sx * e2z, qz = sx * e2y - sy * e2x;
      const u = sgn * (dx * qx + dy * qy + dz * qz);
      if (u < 0) continue;
      const rx = e1y * sz - e1z * sy, ry = e1z * sx - e1x * sz, rz = e1x * sy - e1y * sx;
      const w = sgn * (dx * rx + dy * ry + dz * rz);
      if (w < 0 || u + w > ad) continue;
      const t = -sgn * (sx * nx + sy * ny + sz * nz) / ad;
      if (t > 0 && t < tMax && t < best) best = t;
    }
    return best;
  };
  // every drawn mesh (and instance) that can cover something, with its CSS-px box, in a grid
  // of CELL px cells (a box partly behind the camera: every cell)
  const blockersOf = (scene, vp, rect, W, H) => {
    // an instance's box is its geometry's (localBox of an InstancedMesh spans all of them)
    const box = (n) => n.isInstancedMesh ? geometryBox(n.geometry) : localBox(n);
    const cols = Math.ceil(W / CELL), rows = Math.ceil(H / CELL);
    const grid = Array.from({ length: cols * rows }, () => []);
    let count = 0, full = false;
    const add = (n, m) => {
      if (count >= MAX_BLOCKERS) { full = true; return; }
      count++;
      const b = box(n), e = { n, m, im: undefined };
      let x0 = 0, y0 = 0, x1 = W, y1 = H;
      if (b) {
        const pm = mul(vp, m);
        let behind = false;
        x0 = Infinity; y0 = Infinity; x1 = -Infinity; y1 = -Infinity;
        for (let i = 0; i < 8 && !behind; i++) {
          const x = b[(i & 1) ? 3 : 0], y = b[(i & 2) ? 4 : 1], z = b[(i & 4) ? 5 : 2];
          const cw = pm[3] * x + pm[7] * y + pm[11] * z + pm[15];
          if (cw <= 1e-6) { behind = true; break; }
          const px = rect.left + ((pm[0] * x + pm[4] * y + pm[8] * z + pm[12]) / cw + 1) / 2 * rect.width;
          const py = rect.top + (1 - (pm[1] * x + pm[5] * y + pm[9] * z + pm[13]) / cw) / 2 * rect.height;
          x0 = Math.min(x0, px); x1 = Math.max(x1, px); y0 = Math.min(y0, py); y1 = Math.max(y1, py);
        }
        if (behind) { x0 = 0; y0 = 0; x1 = W; y1 = H; }
      }
      const c0 = Math.max(0, Math.floor(x0 / CELL)), c1 = Math.min(cols - 1, Math.floor(x1 / CELL));
      const r0 = Math.max(0, Math.floor(y0 / CELL)), r1 = Math.min(rows - 1, Math.floor(y1 / CELL));
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) grid[r * cols + c].push(e);
    };
    const visit = (n) => {
      if (!n.visible) return;
      if (n.isMesh && !n.isSkinnedMesh && drawn(n)) {
        if (n.isInstancedMesh && n.instanceMatrix) {
          const a = n.instanceMatrix.array;
          for (let i = 0; i < n.count; i++) add(n, mul(n.matrixWorld.elements, a.subarray(16 * i, 16 * i + 16)));
        } else add(n, n.matrixWorld.elements);
      }
      for (const c of n.children) visit(c);
    };
    visit(scene);
    return { grid, cols, rows, full };
  };
  // {points, on, covered} of a claimed node whose CSS-px box is `b` (see above)
  const rays = (node, b, skip, blk, ivp, rect, W, H) => {
    const own = [];
    const visit = (n) => {
      if (!n.visible || (n !== node && skip.has(n))) return;
      if (n.isMesh && !n.isInstancedMesh && !n.isSkinnedMesh && drawn(n)) own.push(n);
      for (const c of n.children) visit(c);
    };
    visit(node);
    const w = b[2] - b[0], h = b[3] - b[1];
    const pts = [[0.5, 0.5], [INSET, INSET], [1 - INSET, INSET], [INSET, 1 - INSET], [1 - INSET, 1 - INSET]];
    let points = 0, on = 0, covered = 0;
    for (const [fx, fy] of pts) {
      const px = b[0] + fx * w, py = b[1] + fy * h;
      if (px < 0 || py < 0 || px >= W || py >= H) continue;
      points++;
      const ray = rayAt(ivp, rect, px, py);
      let depth = Infinity;
      for (const n of own) {
        const m = n.matrixWorld.elements;
        depth = Math.min(depth, hitMesh(n, m, inv(m), ray, depth));
      }
      if (depth === Infinity) continue;                 // off its outline here
      on++;
      const cell = blk.grid[Math.floor(py / CELL) * blk.cols + Math.floor(px / CELL)] || [];
      for (const e of cell) {
        if (contains(node, e.n)) continue;              // its own parts
        if (e.im === undefined) e.im = inv(e.m);
        if (hitMesh(e.n, e.m, e.im, ray, depth * (1 - 1e-6)) < Infinity) { covered++; break; }
      }
    }
    return { points, on, covered };
  };

  // The movers of every scene rendered in the last `frameMs` (the frame on screen), as claims.
  const movers = (recentMs, frameMs, worldShare, minPx) => {
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
      const ivp = inv(vp);
      let blk = null;
      for (const n of found) {
        const b = screenBox(n, vp, rect, skip);
        if (!b || big(b)) continue;                      // a big one: the world moves, not an object in it
        const cx = (b[0] + b[2]) / 2, cy = (b[1] + b[3]) / 2, h = hist.get(n);
        const visible = cx >= 0 && cy >= 0 && cx < W && cy < H;
        const claim = { id: 'three:' + n.uuid, category: null, x: cx, y: cy, w: b[2] - b[0], h: b[3] - b[1], visible,
                        // its place in the camera's frame stood while it moved in the world
                        fixed_to_camera: !recent(h.vAt) };
        if (visible && ivp && Math.max(b[2] - b[0], b[3] - b[1]) >= (minPx || 0)) {
          if (blk === null) blk = blockersOf(scene, vp, rect, W, H);
          if (!blk.full) claim.rays = rays(n, b, skip, blk, ivp, rect, W, H);
        }
        out.push(claim);
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
