// A reply's stream that loses its server: say so at once, keep the words already shown while the
// browser reconnects, and let the server's answer (the turn as it stored it) replace them on return.
(function () {
  "use strict";

  var LOST = "Connection lost — reconnecting…";
  var BACK = "Reconnected — picking the reply up where the server saved it…";

  function notice(bubble, text) {
    var slot = bubble.querySelector(".stream-notice");
    if (!slot) {
      slot = document.createElement("p");
      slot.className = "stream-notice";
      slot.setAttribute("role", "status");
      var body = bubble.querySelector(".message-body") || bubble;
      body.insertBefore(slot, body.querySelector(".streamed-text"));
    }
    slot.textContent = text;
    bubble.classList.toggle("is-reconnecting", text === LOST);
  }

  // A broken connection: EventSource retries by itself (readyState CONNECTING) after the
  // stream's `retry:` delay. A refusal (404: the conversation was deleted) closes it for good.
  document.addEventListener("htmx:sseError", function (event) {
    var bubble = event.detail.elt, source = event.detail.source;
    if (!bubble || !bubble.classList || !bubble.classList.contains("is-streaming")) return;
    if (source && source.readyState !== EventSource.CLOSED) {
      bubble.dataset.lost = "1";
      notice(bubble, LOST);
      return;
    }
    var note = document.createElement("article");
    note.className = "message message--assistant";
    note.id = bubble.id;
    var avatar = bubble.querySelector(".avatar");
    note.innerHTML = '<div class="avatar" aria-hidden="true"></div>' +
      '<div class="message-body"><p class="error-message"></p></div>';
    note.querySelector(".avatar").textContent = avatar ? avatar.textContent : "";
    note.querySelector("p").textContent =
      "This reply can't be shown. Reload the page to see the conversation as saved.";
    bubble.replaceWith(note);  // detached, the sse extension closes the stream instead of retrying
  });

  // Back again: the words stay until the new stream sends its own (it replays the reply from its
  // start, or sends the turn as saved when another worker took it over).
  document.addEventListener("htmx:sseOpen", function (event) {
    var bubble = event.detail.elt;
    if (bubble.dataset.opened) {
      bubble.dataset.replay = "1";
      if (bubble.dataset.lost) notice(bubble, BACK);
    }
    bubble.dataset.opened = "1";
  });

  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var bubble = event.target.closest ? event.target.closest(".is-streaming") : null;
    if (!bubble || !bubble.dataset.replay) return;
    delete bubble.dataset.replay;
    delete bubble.dataset.lost;
    bubble.querySelectorAll(".streamed-blocks, .streamed-tail, .tool-step-list--live").forEach(function (e) { e.replaceChildren(); });
    var slot = bubble.querySelector(".stream-notice");
    if (slot) slot.remove();
    bubble.classList.remove("is-reconnecting");
  });
})();
