// Refreshes every element that has a data-refresh URL: fetches the URL (the
// server renders that part alone) and swaps it in. Paused while the tab is
// hidden. No framework: this is all the script the dashboard has.
"use strict";
(function () {
  function refresh(el) {
    var url = el.getAttribute("data-refresh");
    var every = parseInt(el.getAttribute("data-refresh-ms"), 10) || 2000;
    function tick() {
      if (document.hidden) { setTimeout(tick, every); return; }
      fetch(url, { headers: { Accept: "text/html" }, cache: "no-store" })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) { el.innerHTML = html; el.classList.remove("stale"); })
        .catch(function () { el.classList.add("stale"); })
        .finally(function () { setTimeout(tick, every); });
    }
    setTimeout(tick, every);
  }
  document.querySelectorAll("[data-refresh]").forEach(refresh);
})();
