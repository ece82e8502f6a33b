// Fennec: a blob's line ranges. Highlights the lines a #L10-20 fragment
// names (GitLab's form; #L10-L20 too) and lets shift-click on a line
// number extend the selection from the last line clicked. Without this
// script #L10 still works, through CSS :target.
(function () {
  "use strict";
  function mark() {
    var m = /^#L(\d+)(?:-L?(\d+))?$/.exec(location.hash);
    var marked = document.querySelectorAll("table.code tr.hl");
    for (var k = 0; k < marked.length; k++) marked[k].classList.remove("hl");
    if (!m) return;
    var a = +m[1], b = m[2] ? +m[2] : a;
    if (b < a) { var t = a; a = b; b = t; }
    b = Math.min(b, a + 20000); // a page shows at most 20,000 lines
    for (var i = a; i <= b; i++) {
      var tr = document.getElementById("L" + i);
      if (!tr) break;
      tr.classList.add("hl");
    }
    var first = document.getElementById("L" + a);
    if (first && m[2]) first.scrollIntoView({ block: "center" });
  }
  var from = 0;
  document.addEventListener("click", function (e) {
    var link = e.target.closest ? e.target.closest("table.code td.num a") : null;
    if (!link) return;
    var n = +link.getAttribute("href").slice(2);
    if (e.shiftKey && from) {
      e.preventDefault();
      history.replaceState(null, "", "#L" + Math.min(from, n) + "-" + Math.max(from, n));
      mark();
      return;
    }
    from = n;
  });
  window.addEventListener("hashchange", mark);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mark);
  else mark();
})();
