// The chat page's few behaviours htmx does not cover: Enter sends, the message box grows with its
// text and empties once sent, the newest words stay in view, and failures are said out loud.
(function () {
  "use strict";

  function messageBox() { return document.getElementById("message"); }

  function fit(box) {
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight, 220) + "px";
  }

  function showError(text) {
    var slot = document.getElementById("composer-error");
    if (!slot) return;
    var p = document.createElement("p");
    p.className = "error-message";
    p.textContent = text;
    slot.replaceChildren(p);
  }

  // Follow the reply as it streams, unless the reader scrolled up to read something else.
  var following = true;
  document.addEventListener("scroll", function (event) {
    var s = event.target;
    if (s.id === "scroller") following = s.scrollHeight - s.scrollTop - s.clientHeight < 80;
  }, true);
  function keepNewestInView(force) {
    var s = document.getElementById("scroller");
    if (s && (following || force)) s.scrollTop = s.scrollHeight;
  }

  // Enter sends, Shift+Enter adds a line; nothing is sent while a reply streams or the box is empty.
  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (box.id !== "message" || event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    var send = box.form.querySelector(".button--send");
    if (box.value.trim() && send && !send.disabled) box.form.requestSubmit();
  });
  document.addEventListener("input", function (event) {
    if (event.target.id === "message") fit(event.target);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form.id !== "composer" || !event.detail.xhr || event.detail.xhr.status >= 300) return;
    form.reset();  // sent (or empty and ignored): a refused message stays to be shortened
    if (messageBox()) fit(messageBox());
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "messages") { following = true; keepNewestInView(true); }
  });
  document.addEventListener("htmx:afterSettle", function () { keepNewestInView(false); });
  document.addEventListener("htmx:sseMessage", function () { keepNewestInView(false); });

  // A reconnect (network blip) replays the reply from its start: clear what the first try showed.
  document.addEventListener("htmx:sseOpen", function (event) {
    var bubble = event.detail.elt;
    if (bubble.dataset.opened) {
      bubble.querySelectorAll(".streamed-text, .tool-step-list--live").forEach(function (e) { e.replaceChildren(); });
    }
    bubble.dataset.opened = "1";
  });
  // The server refused the stream (say, the conversation was deleted): say so instead of retrying.
  document.addEventListener("htmx:sseError", function (event) {
    var bubble = event.detail.elt, source = event.detail.source;
    if (!source || source.readyState !== EventSource.CLOSED) return;  // the browser is reconnecting
    var note = document.createElement("article");
    note.className = "message message--assistant";
    note.id = bubble.id;
    note.innerHTML = '<div class="avatar" aria-hidden="true">N</div>' +
      '<div class="message-body"><p class="error-message"></p></div>';
    note.querySelector("p").textContent =
      "This reply can't be shown. Reload the page to see the conversation as saved.";
    bubble.replaceWith(note);  // detached, the sse extension closes the stream instead of retrying
  });

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    showError(status === 404 ? "That conversation no longer exists. Reload the page."
                             : "Something went wrong (" + status + "). Please try again.");
  });
  document.addEventListener("htmx:sendError", function () {
    showError("Nimbus can't be reached. Check your connection and try again.");
  });

  document.addEventListener("DOMContentLoaded", function () { keepNewestInView(true); });
  window.addEventListener("resize", function () { keepNewestInView(false); });
})();
