// Scoring from the keyboard on a candidate page: j / k move to the next /
// previous graded item (it is outlined and scrolled to the middle), 1–5 pick that item's
// level in the order shown (each level shows its key), n saves and opens the next candidate
// in the queue at the same video time. Clicking or tabbing into an item makes it the current
// one. Keys typed into a text field, or with Ctrl/Alt/Meta, are left alone.
(function () {
  "use strict";
  var video = document.querySelector("aside.media video");
  var form = document.getElementById("scores");

  // "save & next" carries the video's time; the next page starts its video there
  if (video && video.dataset.start) {
    var start = parseFloat(video.dataset.start);
    var seek = function () { video.currentTime = Math.min(start, video.duration || start); };
    if (video.readyState >= 1) seek(); else video.addEventListener("loadedmetadata", seek, { once: true });
  }
  if (form) {
    form.addEventListener("submit", function () {
      var t = form.querySelector("input[name=video_t]");
      if (t && video) t.value = video.currentTime.toFixed(2);
    });
  }

  var items = Array.prototype.slice.call(document.querySelectorAll("article.item"))
    .filter(function (a) { return a.querySelector("fieldset.levels input[type=radio]"); });
  var current = -1;

  function mark(i) {
    if (current >= 0) items[current].classList.remove("current");
    current = i;
    items[i].classList.add("current");
  }

  document.addEventListener("focusin", function (e) {
    var i = items.indexOf(e.target.closest ? e.target.closest("article.item") : null);
    if (i >= 0 && i !== current) mark(i);
  });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    var t = e.target;
    if (t && (t.tagName === "TEXTAREA" || t.isContentEditable ||
              (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox"))) return;
    if (e.key === "n") {
      var next = document.getElementById("submit-next");
      if (next && !next.disabled) { e.preventDefault(); next.click(); }
      return;
    }
    if (!items.length) return;
    if (e.key === "j" || e.key === "k") {
      var i = e.key === "j" ? Math.min(current + 1, items.length - 1) : Math.max(current - 1, 0);
      mark(i);
      items[i].scrollIntoView({ block: "center" });
      e.preventDefault();
      return;
    }
    if (/^[1-5]$/.test(e.key) && current >= 0) {
      var r = items[current].querySelectorAll("fieldset.levels input[type=radio]")[Number(e.key) - 1];
      if (r && !r.disabled) { r.checked = true; r.dispatchEvent(new Event("change", { bubbles: true })); }
      e.preventDefault();
    }
  });
})();
