"use strict";
// A click (or Enter) on an item of the timeline shows it in the story.
(function () {
  function show(el) {
    var seq = el.getAttribute("data-seq");
    var item = document.getElementById("item-" + seq);
    if (!item) { return; }
    var old = document.querySelector(".item.sel");
    if (old) { old.classList.remove("sel"); }
    item.classList.add("sel");
    item.scrollIntoView({ block: "center" });
    if (history.replaceState) { history.replaceState(null, "", "#item-" + seq); }
  }
  function target(e) {
    var el = e.target.closest ? e.target.closest("[data-seq]") : null;
    return el && el.closest("svg") ? el : null;
  }
  document.addEventListener("click", function (e) {
    var el = target(e);
    if (el) { e.preventDefault(); show(el); }
  });
  document.addEventListener("keydown", function (e) {
    var el = target(e);
    if (el && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); show(el); }
  });
})();
