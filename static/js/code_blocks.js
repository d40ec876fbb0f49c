// A Copy button on each code block of an answer (clipboard API; "Copied" for two seconds, and said
// aloud). Blocks that arrive later (a finished reply, older turns) get theirs on htmx:load.
(function () {
  "use strict";

  function decorate(root) {
    if (!root || !root.querySelectorAll) return;
    var blocks = root.matches && root.matches(".markdown .codehilite") ? [root] : root.querySelectorAll(".markdown .codehilite");
    Array.prototype.forEach.call(blocks, function (block) {
      if (block.querySelector(".code-copy")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "code-copy";
      button.dataset.label = "Copy";
      button.setAttribute("aria-label", "Copy code");
      block.appendChild(button);
    });
  }

  function say(button, label, done) {
    button.dataset.label = label;
    button.setAttribute("aria-label", done ? "Copied" : "Copy code");
    button.classList.toggle("is-done", done);
    var region = document.getElementById("announcer");
    if (region && done) region.textContent = "Code copied";
  }

  function write(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var area = document.createElement("textarea");
    area.value = text;
    area.className = "visually-hidden";
    document.body.appendChild(area);
    area.select();
    var ok = document.execCommand("copy");
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".code-copy") : null;
    if (!button) return;
    var code = button.parentElement.querySelector("pre code") || button.parentElement.querySelector("pre");
    write(code.textContent.replace(/\n$/, "")).then(function () {
      say(button, "Copied", true);
      setTimeout(function () { say(button, "Copy", false); }, 2000);
    }, function () { say(button, "Copy failed", false); });
  });
  document.addEventListener("DOMContentLoaded", function () { decorate(document); });
  document.addEventListener("htmx:load", function (event) { decorate(event.detail.elt); });
})();
