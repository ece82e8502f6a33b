// The live log of a running job's page (issue 30), a progressive
// enhancement: without it, reloading the page shows the new lines.
// While the job runs it asks trace.json for the complete lines after the
// offset it has (with the state the last answer gave) and wait=1: the
// server holds the request until there is something new (or up to its
// limit), and the page asks again at once. An answer back at once with
// nothing (the server has too many waiting) makes it ask a second later;
// after an error it polls every second without waiting for a while.
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
  var plainPolls = 0; // after an error: polls left without wait=1
  function poll() {
    var waiting = plainPolls === 0;
    if (!waiting) { plainPolls--; }
    var url = log.dataset.poll + "?offset=" + encodeURIComponent(offset) + "&state=" + encodeURIComponent(state) +
      (waiting ? "&wait=1&status=" + encodeURIComponent(status) : "");
    var asked = Date.now();
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.json(); })
      .then(function (chunk) {
        var follow = atBottom();
        var news = (chunk.parts || []).length > 0 || chunk.status !== status;
        append(chunk.parts || []);
        offset = String(chunk.offset);
        state = chunk.state || "";
        if (follow) { window.scrollTo(0, document.documentElement.scrollHeight); }
        if (chunk.status !== status) { status = chunk.status; refreshHeader(); }
        if (chunk.complete) {
          if (live) { live.textContent = "The job has finished."; }
          return;
        }
        // Again at once after news or a wait that ran its time; a second
        // later after an empty answer that did not wait.
        var waited = waiting && Date.now() - asked >= 500;
        window.setTimeout(poll, chunk.more || news || waited ? 0 : 1000);
      })
      .catch(function () { plainPolls = 10; window.setTimeout(poll, 1000); });
  }
  poll();
})();
