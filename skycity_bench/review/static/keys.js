// Scoring from the keyboard on a candidate page (issue 20 part 7): j / k move to the next /
// previous graded item (it is outlined and scrolled to the middle), 1–5 pick that item's
// level in the order shown (each level shows its key). Clicking or tabbing into an item makes
// it the current one. Keys typed into a text field, or with Ctrl/Alt/Meta, are left alone.
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll("article.item"))
    .filter(function (a) { return a.querySelector("fieldset.levels input[type=radio]"); });
  if (!items.length) return;
  var current = -1;

  function select(i) {
    if (i < 0 || i >= items.length) return;
    if (current >= 0) items[current].classList.remove("current");
    current = i;
    items[i].classList.add("current");
    items[i].scrollIntoView({ block: "center" });
  }

  document.addEventListener("focusin", function (e) {
    var i = items.indexOf(e.target.closest ? e.target.closest("article.item") : null);
    if (i >= 0 && i !== current) {
      if (current >= 0) items[current].classList.remove("current");
      current = i;
      items[i].classList.add("current");
    }
  });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    var t = e.target;
    if (t && (t.tagName === "TEXTAREA" || t.isContentEditable ||
              (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox"))) return;
    if (e.key === "j") { select(Math.min(current + 1, items.length - 1)); e.preventDefault(); return; }
    if (e.key === "k") { select(Math.max(current - 1, 0)); e.preventDefault(); return; }
    if (/^[1-5]$/.test(e.key) && current >= 0) {
      var radios = items[current].querySelectorAll("fieldset.levels input[type=radio]");
      var r = radios[Number(e.key) - 1];
      if (r && !r.disabled) { r.checked = true; r.dispatchEvent(new Event("change", { bubbles: true })); }
      e.preventDefault();
    }
  });
})();
