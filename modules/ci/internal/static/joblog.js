// The live log of a running job's page (issue 30), a progressive
// enhancement: without it, reloading the page shows the new lines.
// While the job runs it asks trace.json every second for the complete
// lines after the offset it has (with the state the last answer gave),
// closes the sections the answer ends, appends the new lines into the
// innermost section still open, and keeps the end in view when the
// reader was there. When the job is over it stops and swaps in the
// page's header (status, times, buttons) as the server now renders it.
// A page far behind catches up in chunks without waiting between them.
(function () {
  "use strict";
  var log = document.getElementById("job-log");
  if (!log || !log.dataset.poll) { return; }
  var offset = log.dataset.offset || "0";
  var state = log.dataset.state || "";
  var header = document.getElementById("job-header");
  var status = header ? header.dataset.status : "";
  var live = document.getElementById("job-live");
  if (live) { live.textContent = "The job is running: new lines appear as they come."; }

  function atBottom() {
    var doc = document.documentElement;
    return window.innerHeight + window.scrollY >= doc.scrollHeight - 48;
  }
  function innermost() {
    var open = log.querySelectorAll("details.ts[data-open]");
    return open.length ? open[open.length - 1] : log;
  }
  function append(parts) {
    parts.forEach(function (part) {
      (part.close || []).forEach(function (duration) {
        var section = innermost();
        if (section === log) { return; }
        section.removeAttribute("data-open");
        var sd = section.querySelector(":scope > summary .sd");
        if (sd) { sd.textContent = duration; }
      });
      if (part.html) { innermost().insertAdjacentHTML("beforeend", part.html); }
    });
  }
  function refreshHeader() {
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("job-header"), old = document.getElementById("job-header");
        if (fresh && old) { old.replaceWith(fresh); }
      })
      .catch(function () {});
  }
  function poll() {
    var url = log.dataset.poll + "?offset=" + encodeURIComponent(offset) + "&state=" + encodeURIComponent(state);
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.json(); })
      .then(function (chunk) {
        var follow = atBottom();
        append(chunk.parts || []);
        offset = String(chunk.offset);
        state = chunk.state || "";
        if (follow) { window.scrollTo(0, document.documentElement.scrollHeight); }
        if (chunk.status !== status) { status = chunk.status; refreshHeader(); }
        if (chunk.complete) {
          if (live) { live.textContent = "The job has finished."; }
          return;
        }
        window.setTimeout(poll, chunk.more ? 0 : 1000);
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
})();
