// Fennec: the Changes tab's collapsed files, loaded in place. A file past
// the page's budget is a closed <details class="deferred"> whose link
// shows the file alone (?file=<path>); opening the entry, or following
// its link, fetches that page and puts the file's diff in place of the
// entry. Without this script the link still works; if the fetch fails,
// the browser follows it.
(function () {
  "use strict";
  function load(entry, link) {
    if (entry.getAttribute("aria-busy") === "true") return;
    entry.setAttribute("aria-busy", "true");
    fetch(link.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (resp) {
        if (!resp.ok) throw new Error(resp.status);
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var loaded = doc.getElementById(entry.id);
        if (!loaded || loaded.classList.contains("deferred")) throw new Error("no diff");
        loaded.open = true;
        entry.replaceWith(document.importNode(loaded, true));
      })
      .catch(function () {
        location.href = link.href;
      });
  }
  function linkOf(entry) {
    return entry.querySelector(":scope > .body > a.load-diff");
  }
  document.addEventListener("click", function (e) {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    var link = e.target.closest ? e.target.closest("details.deferred a.load-diff") : null;
    if (!link) return;
    e.preventDefault();
    load(link.closest("details"), link);
  });
  // toggle does not bubble: listen while it goes down (capture).
  document.addEventListener("toggle", function (e) {
    var entry = e.target;
    if (!entry.open || !entry.classList || !entry.classList.contains("deferred")) return;
    var link = linkOf(entry);
    if (link) load(entry, link);
  }, true);
})();
