// Chapter marks and evidence moments on a candidate page (review/chapters.py
// builds the marks from the report): every button or tick with data-t seeks the recording
// (#recording) to that second; the marks also become the video's kind="chapters" text track
// (VTT cues). Evidence images open full size in a dialog (plots readable: click to enlarge),
// the link still opens the image itself with the middle button or without script.
(function () {
  "use strict";
  var video = document.getElementById("recording");

  function seek(t) {
    if (!video || !(t >= 0)) return;
    var go = function () {
      video.currentTime = video.duration ? Math.min(t, video.duration) : t;
    };
    if (video.readyState >= 1) go(); else video.addEventListener("loadedmetadata", go, { once: true });
    if (video.scrollIntoView) video.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest("[data-t].seek, .chapter-bar .tick") : null;
    if (!b || b.disabled) return;
    e.preventDefault();
    seek(parseFloat(b.dataset.t));
  });

  var marks = Array.prototype.slice.call(document.querySelectorAll(".chapter-list button.chapter:not([disabled])"));
  var bar = document.querySelector(".chapter-bar");

  function layout(duration) {          // ticks at their share of the recording's length
    if (!bar || !(duration > 0)) return;
    bar.querySelectorAll(".tick").forEach(function (tk) {
      var a = parseFloat(tk.dataset.t), e = tk.dataset.end ? parseFloat(tk.dataset.end) : null;
      tk.style.left = Math.min(100, a / duration * 100) + "%";
      if (e !== null) tk.style.width = Math.max(0.6, (Math.min(e, duration) - a) / duration * 100) + "%";
    });
    bar.classList.add("ready");
  }

  if (video) {
    layout(parseFloat(bar && bar.dataset.duration));
    var withTrack = function () {
      if (!video.duration) return;
      if (!(bar && bar.dataset.duration)) layout(video.duration);
      if (!marks.length || !video.addTextTrack || typeof VTTCue === "undefined" || video.dataset.chapters) return;
      var track = video.addTextTrack("chapters", "Chapters", "zh");
      marks.forEach(function (m, i) {     // a chapter runs to the next mark (or its own end)
        var a = parseFloat(m.dataset.t);
        var next = i + 1 < marks.length ? parseFloat(marks[i + 1].dataset.t) : video.duration;
        var end = Math.min(video.duration, Math.max(a + 0.001, m.dataset.end ? parseFloat(m.dataset.end) : next));
        if (a < video.duration) track.addCue(new VTTCue(a, end, m.dataset.title || ""));
      });
      video.dataset.chapters = String(track.cues ? track.cues.length : 0);
    };
    if (video.readyState >= 1) withTrack(); else video.addEventListener("loadedmetadata", withTrack, { once: true });
    // where the video is: a cursor on the bar, the chapter it is in highlighted
    var cursor = null;
    if (bar) { cursor = document.createElement("span"); cursor.className = "cursor"; bar.appendChild(cursor); }
    var follow = function () {
      var d = (bar && parseFloat(bar.dataset.duration)) || video.duration, t = video.currentTime;
      if (cursor && d > 0) cursor.style.left = Math.min(100, t / d * 100) + "%";
      var now = -1;
      marks.forEach(function (m, i) { if (parseFloat(m.dataset.t) <= t + 0.01) now = i; });
      marks.forEach(function (m, i) { m.closest("li").classList.toggle("now", i === now); });
    };
    ["timeupdate", "seeked", "loadedmetadata"].forEach(function (e) { video.addEventListener(e, follow); });
    // ] / [ : the next / previous chapter mark (keys typed into a text field are text)
    document.addEventListener("keydown", function (e) {
      if ((e.key !== "]" && e.key !== "[") || e.ctrlKey || e.altKey || e.metaKey || !marks.length) return;
      var t = e.target;
      if (t && (t.tagName === "TEXTAREA" || t.isContentEditable ||
                (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox"))) return;
      var now = video.currentTime, pick = null;
      marks.forEach(function (m) {
        var a = parseFloat(m.dataset.t);
        if (e.key === "]" && a > now + 0.05 && pick === null) pick = a;
        if (e.key === "[" && a < now - 0.5) pick = a;          // half a second in: back to this chapter's start
      });
      if (e.key === "[" && pick === null) pick = parseFloat(marks[0].dataset.t);
      if (pick !== null) { e.preventDefault(); seek(pick); }
    });
  }

  // plots and evidence frames: click for the full image in a dialog
  var dlg = document.getElementById("zoom");
  if (dlg && dlg.showModal) {
    document.addEventListener("click", function (e) {
      var img = e.target.closest ? e.target.closest("img.evidence, .thumbs img") : null;
      if (!img || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      var a = img.closest("a");
      var full = (a && a.getAttribute("href")) || img.currentSrc || img.src;
      e.preventDefault();
      document.getElementById("zoom-img").src = full;
      document.getElementById("zoom-img").alt = img.alt;
      document.getElementById("zoom-full").href = full;
      dlg.showModal();
    });
    dlg.addEventListener("click", function (e) { if (e.target === dlg) dlg.close(); });   // a click outside the image
  }
})();
