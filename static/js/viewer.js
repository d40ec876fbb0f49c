// The viewer's what-if controls follow the URL: after Back or Forward, htmx restores the preview
// from its history cache but a form's typed values are not part of that snapshot, so the controls
// are set again from the URL's query, falling back to the conversation's saved settings.
(function () {
  "use strict";

  function syncControls() {
    var form = document.getElementById("what-if");
    if (!form) return;
    var saved = JSON.parse(form.dataset.saved || "{}");
    var query = new URLSearchParams(window.location.search);
    Object.keys(saved).forEach(function (name) {
      var control = form.elements.namedItem(name);
      if (!control) return;
      var value = query.get(name);
      control.value = value === null || value === "" ? String(saved[name]) : value;
    });
  }

  document.addEventListener("htmx:historyRestore", syncControls);
  window.addEventListener("popstate", function () { window.setTimeout(syncControls, 0); });
  window.addEventListener("pageshow", syncControls);
})();
