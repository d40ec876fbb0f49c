// The chat page's few behaviours htmx does not cover: Enter sends, the message box grows with its
// text and empties only once sent, the newest words stay in view (and the reader's place when older
// turns load above), deep links, copy and edit, the phone drawer, and failures said out loud.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }
  function messageBox() { return byId("message"); }

  function fit(box) {
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight, 220) + "px";
  }

  // Send is offered only with something to send and no reply being written.
  function syncSend() {
    var box = messageBox(), send = document.querySelector("#composer .button--send");
    if (box && send) send.disabled = !box.value.trim() || !!document.querySelector("#composer .button--stop");
  }

  function showError(text) {
    var slot = byId("composer-error");
    if (!slot) return;
    var p = document.createElement("p");
    p.className = "error-message";
    p.textContent = text;
    slot.replaceChildren(p);
  }

  function announce(text) {
    var region = byId("announcer");
    if (region) region.textContent = text;
  }

  // The newest turn this tab shows (ids carry turn numbers, from 1; the server counts from 0).
  function lastSeq() {
    var questions = document.querySelectorAll("#messages .message--user");
    var last = questions[questions.length - 1];
    return last ? parseInt(last.id.split("-")[1], 10) - 1 : -1;
  }

  // Follow the reply as it streams, unless the reader scrolled up to read something else: then a
  // button offers the way back to the newest message (and says when new words arrived below).
  var following = true, fromBottom = null, lastTop = 0;
  function newestButton() { return document.querySelector(".scroll-newest"); }
  function syncNewest(arrived) {
    var button = newestButton(), s = byId("scroller");
    if (!button || !s) return;
    var away = !following || !!document.querySelector(".load-more--newer");
    if (!away && button.contains(document.activeElement) && messageBox()) messageBox().focus({ preventScroll: true });
    button.hidden = !away;
    if (!away) button.classList.remove("has-new");
    else if (arrived) button.classList.add("has-new");
  }
  document.addEventListener("scroll", function (event) {
    var s = event.target;
    if (s.id !== "scroller") return;
    // Only a move up stops following: content that grew under a scroll down is no reason to.
    var near = s.scrollHeight - s.scrollTop - s.clientHeight < 80;
    following = near || (following && s.scrollTop >= lastTop);
    lastTop = s.scrollTop;
    if (following && !near) s.scrollTop = s.scrollHeight;
    syncNewest(false);
  }, true);
  // A wheel or key moving up says so before the scroll lands, so a word arriving meanwhile
  // cannot pull the reader back down.
  function readingUp() { following = false; syncNewest(false); }
  document.addEventListener("wheel", function (event) {
    if (event.deltaY < 0 && event.target.closest && event.target.closest("#scroller")) readingUp();
  }, { capture: true, passive: true });
  document.addEventListener("keydown", function (event) {
    if (/^(PageUp|ArrowUp|Home)$/.test(event.key) && event.target.closest && event.target.closest("#scroller")) readingUp();
  }, true);
  function keepNewestInView(force) {
    var s = byId("scroller");
    if (s && (following || force)) s.scrollTop = s.scrollHeight;
    syncNewest(false);
  }
  function goToNewest() {
    if (document.querySelector(".load-more--newer")) { location.href = location.pathname; return; }
    following = true;
    keepNewestInView(true);
  }

  // A link to a turn (#turn-12-question) this page does not show: open the page around that turn.
  function openDeepLink() {
    var match = /^#turn-(\d+)-(question|answer)$/.exec(location.hash);
    if (!match || !byId("messages")) return false;
    var target = byId(location.hash.slice(1));
    if (!target) {
      if (!/[?&]at=/.test(location.search)) location.replace(location.pathname + "?at=" + match[1] + location.hash);
      return false;
    }
    following = false;
    target.scrollIntoView({ block: "start" });
    return true;
  }

  // A form htmx swapped in is wired only when its swap settles: Enter pressed before then would
  // submit it natively (a GET of the page with the fields in its address). Wire it now and send it.
  var rewired = new WeakSet();
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || !window.htmx || rewired.has(form) ||
        !form.matches("form[hx-post], form[hx-patch], form[hx-put], form[hx-delete]")) return;
    event.preventDefault();
    rewired.add(form);
    htmx.process(form);
    htmx.trigger(form, "submit");
  });

  // Enter sends, Shift+Enter adds a line; nothing is sent while a reply streams or the box is empty.
  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (event.key === "Escape" && !event.shiftKey) {  // Shift+Esc: static/js/shortcuts.js
      if (box.classList && box.classList.contains("rename-input")) {
        box.form.querySelector(".rename-cancel").click();
      } else if (closeDrawer()) {
        event.preventDefault();
      }
      return;
    }
    if (box.id !== "message" || event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    var send = box.form.querySelector(".button--send");
    syncSend();
    if (box.value.trim() && send && !send.disabled) box.form.requestSubmit();
  });
  document.addEventListener("input", function (event) {
    if (event.target.id === "message") { fit(event.target); syncSend(); }
  });

  document.addEventListener("htmx:configRequest", function (event) {
    if (/\/c\/[^/]+\/messages$/.test(event.detail.path)) event.detail.parameters.last_seen = lastSeq();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt, status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (form.id === "composer" && status >= 200 && status < 300) {
      form.reset();  // sent (or empty and ignored); refused or unreachable, the text stays
      if (messageBox()) fit(messageBox());
    }
    syncSend();
  });

  // Older turns load above the reader: keep what they were reading where it was.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target, s = byId("scroller");
    if (s && target && target.classList.contains("load-more--older")) fromBottom = s.scrollHeight - s.scrollTop;
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var s = byId("scroller");
    if (fromBottom !== null && s) { s.scrollTop = s.scrollHeight - fromBottom; fromBottom = null; return; }
    var target = event.detail.target;
    if (target && target.id === "messages" && event.detail.requestConfig &&
        event.detail.requestConfig.verb === "post") { following = true; keepNewestInView(true); }
  });
  document.addEventListener("htmx:afterSettle", function () {
    keepNewestInView(false);
    syncSend();
    localTimes();
    // The focused button went away (Stop, once the reply is saved): carry on in the message box.
    if (document.activeElement === document.body && messageBox()) messageBox().focus({ preventScroll: true });
  });
  document.addEventListener("htmx:sseMessage", function () { keepNewestInView(false); syncNewest(true); });

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    showError(status === 404 ? "That conversation no longer exists. Reload the page."
                             : "Something went wrong (" + status + "). Please try again.");
  });
  document.addEventListener("htmx:sendError", function (event) {
    var fromComposer = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("#composer");
    showError("Nimbus can't be reached. Check your connection and try again" +
              (fromComposer ? ": your message is still in the box." : "."));
  });

  // Copy an answer; edit a question in place (sent as a new version of that turn).
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button") : null;
    if (!button) return;
    if (button.classList.contains("action-copy")) copyAnswer(button);
    else if (button.classList.contains("action-edit")) editQuestion(button);
    else if (button.classList.contains("action-edit-cancel")) cancelEdit(button);
    else if (button.classList.contains("menu-button")) openDrawer();
    else if (button.classList.contains("scroll-newest")) goToNewest();
    else if (button.classList.contains("drawer-close") || button.classList.contains("drawer-backdrop")) closeDrawer();
  });
  function copyAnswer(button) {
    var text = button.closest(".message").querySelector(".markdown").innerText.trim();
    var done = function () {
      button.classList.add("is-done");
      button.setAttribute("aria-label", "Copied");
      announce("Answer copied");
      setTimeout(function () { button.classList.remove("is-done"); button.setAttribute("aria-label", "Copy this answer"); }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { showError("Copying was not allowed by the browser."); });
    } else {
      var area = document.createElement("textarea");
      area.value = text;
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
      done();
    }
  }
  // Edit opens the question's own form: sending it starts a new version, the old one is kept.
  function editQuestion(button) {
    var message = button.closest(".message");
    var form = message.querySelector(".edit-question");
    if (!form) return;
    message.classList.add("is-editing");
    form.hidden = false;
    var area = form.querySelector("textarea");
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }
  function cancelEdit(button) {
    var message = button.closest(".message");
    var form = message.querySelector(".edit-question");
    form.reset();
    form.hidden = true;
    message.classList.remove("is-editing");
    var edit = message.querySelector(".action-edit");
    if (edit) edit.focus();
  }

  // Phones: the sidebar is a drawer; it closes on Escape, on the backdrop, or on choosing a link.
  function layout() { return document.querySelector(".chat-layout"); }
  function openDrawer() {
    var l = layout();
    if (!l) return;
    l.classList.add("drawer-open");
    document.querySelectorAll(".menu-button").forEach(function (b) { b.setAttribute("aria-expanded", "true"); });
    var first = document.querySelector("#sidebar .button--new");
    if (first) first.focus();
  }
  function closeDrawer() {
    var l = layout();
    if (!l || !l.classList.contains("drawer-open")) return false;
    l.classList.remove("drawer-open");
    document.querySelectorAll(".menu-button").forEach(function (b) { b.setAttribute("aria-expanded", "false"); });
    var menu = document.querySelector(".menu-button");
    if (menu) menu.focus();
    return true;
  }

  // Times are sent in UTC; show them in the reader's own time zone.
  function localTimes() {
    document.querySelectorAll("time.message-time:not([data-local])").forEach(function (t) {
      var date = new Date(t.getAttribute("datetime"));
      if (isNaN(date)) return;
      t.textContent = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      t.title = date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
      t.dataset.local = "1";
    });
  }

  // The Undo note leaves once its window has passed (the conversation is then gone for good).
  function expireUndo() {
    document.querySelectorAll(".undo-note:not([data-timed])").forEach(function (note) {
      note.dataset.timed = "1";
      setTimeout(function () { note.remove(); }, 1000 * parseFloat(note.dataset.seconds || "15"));
    });
  }
  document.addEventListener("htmx:afterSettle", expireUndo);
  document.addEventListener("DOMContentLoaded", expireUndo);

  // Back on this tab: show what another tab (or device) sent meanwhile.
  function catchUp() {
    var messages = byId("messages");
    if (document.visibilityState !== "visible" || !messages || !messages.dataset.turnsUrl || !window.htmx) return;
    if (document.querySelector(".is-streaming, .load-more--newer, .htmx-request")) return;
    htmx.ajax("GET", messages.dataset.turnsUrl + "?after=" + lastSeq(), { target: "#messages", swap: "beforeend" });
  }
  document.addEventListener("visibilitychange", catchUp);
  window.addEventListener("focus", catchUp);

  document.addEventListener("DOMContentLoaded", function () {
    if (!openDeepLink()) keepNewestInView(true);
    syncSend();
    localTimes();
  });
  window.addEventListener("hashchange", openDeepLink);
  window.addEventListener("resize", function () { keepNewestInView(false); });
  // Late layout (the gauge arriving, wrapped action rows) must not leave a reader who was at the
  // newest message above it.
  document.addEventListener("DOMContentLoaded", function () {
    var s = byId("scroller");
    if (!s || !window.ResizeObserver) return;
    var observer = new ResizeObserver(function () { keepNewestInView(false); });
    observer.observe(s);
    if (byId("messages")) observer.observe(byId("messages"));
  });
})();
