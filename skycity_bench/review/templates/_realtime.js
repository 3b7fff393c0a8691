// The real-time capture's plot beside its video (_realtime.html): frame intervals over time,
// long frames and stalls as marks that seek the video; a cursor follows it. One copy serves
// both: inline in the offline report.html, and as /js/realtime.js in the review app (whose
// Content-Security-Policy runs no inline script). Runs once after the boxes it draws.
(function () {
  var NS = 'http://www.w3.org/2000/svg', W = 1000, H = 160, LEAD = 0.25;   // jump a quarter second before a stall
  document.querySelectorAll('.realtime').forEach(function (box) {
    if (box.dataset.ready) return;
    box.dataset.ready = '1';
    var d = JSON.parse(box.querySelector('.rt-data').textContent);
    var v = box.querySelector('video'), svg = box.querySelector('svg');
    var T = d.duration_s || 1, top = d.long_ms * 3;
    function x(t) { return Math.max(0, Math.min(W, t / T * W)); }
    function y(ms) { return H - Math.min(ms, top) / top * (H - 4); }
    function el(name, attrs) {
      var e = document.createElementNS(NS, name);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      svg.appendChild(e);
      return e;
    }
    function jump(t) { v.pause(); v.currentTime = Math.max(0, t - LEAD); }
    if (d.first_frame_s) el('rect', {x: 0, y: 0, width: x(d.first_frame_s), height: H, 'class': 'rt-dropped'});
    d.dropped_spans_s.forEach(function (s) {
      el('rect', {x: x(s[0]), y: 0, width: Math.max(1, x(s[1]) - x(s[0])), height: H, 'class': 'rt-dropped'});
    });
    el('line', {x1: 0, x2: W, y1: y(d.long_ms), y2: y(d.long_ms), 'class': 'rt-limit'});
    el('polyline', {points: d.points.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' '),
                    'class': 'rt-line'});
    d.stalls.forEach(function (s) {
      var m = el('rect', {x: x(s.t_s) - 2, y: 0, width: Math.max(4, x(s.ms / 1000)), height: H, 'class': 'rt-long',
                          'data-t': s.t_s});
      var title = document.createElementNS(NS, 'title');
      title.textContent = s.t_s.toFixed(2) + ' s: ' + Math.round(s.ms) + ' ms';
      m.appendChild(title);
      m.addEventListener('click', function (ev) { ev.stopPropagation(); jump(s.t_s); });
    });
    var cursor = el('line', {x1: 0, x2: 0, y1: 0, y2: H, 'class': 'rt-cursor'});
    function follow() {
      var cx = x(v.currentTime);
      cursor.setAttribute('x1', cx); cursor.setAttribute('x2', cx);
      box.dataset.cursorT = v.currentTime.toFixed(3);
    }
    function loop() { follow(); if (!v.paused && !v.ended) requestAnimationFrame(loop); }
    ['timeupdate', 'seeked', 'seeking', 'loadedmetadata'].forEach(function (e) { v.addEventListener(e, follow); });
    v.addEventListener('play', function () { requestAnimationFrame(loop); });
    svg.addEventListener('click', function (ev) {       // anywhere else on the plot: seek there
      var r = svg.getBoundingClientRect();
      v.currentTime = Math.max(0, (ev.clientX - r.left) / r.width * T);
    });
    box.querySelectorAll('.rt-jump').forEach(function (b) {
      b.addEventListener('click', function () { jump(parseFloat(b.dataset.t)); });
    });
    follow();
  });
})();
