// The chat's keyboard shortcuts beyond Enter: new conversation, search, the message box, Stop, and
// the ? list (a modal dialog: the focus stays inside, Escape closes it). None fires while typing,
// except the modified ones and Shift+Esc, which are meant to work from the message box.
(function () {
  "use strict";

  function dialog() { return document.getElementById("shortcuts"); }
  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }
  function focusables(root) {
    return Array.prototype.filter.call(root.querySelectorAll("button, a[href], input, [tabindex]"),
      function (el) { return !el.disabled && el.tabIndex >= 0; });
  }

  var opener = null;
  function openList() {
    var d = dialog();
    if (!d || d.open) return;
    opener = document.activeElement;
    d.showModal();
    d.querySelector(".shortcuts-close").focus();
  }
  function closeList() {
    var d = dialog();
    if (d && d.open) d.close();
  }

  function searchBox() {
    var box = document.getElementById("history-query");
    if (!box) return null;
    var menu = document.querySelector(".menu-button");
    if (getComputedStyle(box).visibility === "hidden" && menu) menu.click();  // phones: in the closed drawer
    return box;
  }

  // A drawer sliding in keeps its contents unfocusable until it is visible: try for a moment.
  function focusSoon(box, tries) {
    box.focus();
    if (document.activeElement === box) box.select();
    else if (tries > 0) setTimeout(function () { focusSoon(box, tries - 1); }, 40);
  }

  document.addEventListener("keydown", function (event) {
    var d = dialog(), mod = event.ctrlKey || event.metaKey, key = event.key;
    if (d && d.open) {
      if (key === "Tab") {  // keep the focus in the list
        var items = focusables(d), first = items[0], last = items[items.length - 1];
        if (event.shiftKey ? document.activeElement === first : document.activeElement === last) {
          event.preventDefault();
          (event.shiftKey ? last : first).focus();
        }
      }
      return;  // the dialog's own Escape closes it
    }
    if (event.defaultPrevented || event.isComposing) return;
    if (mod && event.shiftKey && key.toLowerCase() === "o") {
      event.preventDefault();
      var start = document.querySelector("#sidebar .button--new");
      if (start) location.href = start.href;
    } else if ((mod && !event.shiftKey && key.toLowerCase() === "k") || (key === "/" && !mod && !typing(event.target))) {
      var box = searchBox();
      if (box) { event.preventDefault(); focusSoon(box, 12); }
    } else if (key === "Escape" && event.shiftKey) {
      var message = document.getElementById("message");
      if (message) {
        event.preventDefault();
        if (document.querySelector(".chat-layout.drawer-open")) document.querySelector(".drawer-close").click();
        message.focus();
      }
    } else if (key === "Escape" && !event.target.classList.contains("rename-input")) {
      var stop = document.querySelector("#composer .button--stop");
      if (stop && !document.querySelector(".chat-layout.drawer-open")) { event.preventDefault(); stop.click(); }
    } else if (key === "?" && !mod && !typing(event.target)) {
      event.preventDefault();
      openList();
    }
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button") : null;
    if (button && button.classList.contains("shortcuts-open")) openList();
    else if (button && button.classList.contains("shortcuts-close")) closeList();
    else if (event.target === dialog()) closeList();  // a click on the backdrop
  });
  document.addEventListener("close", function (event) {
    if (event.target === dialog() && opener && opener.focus) opener.focus();
  }, true);
})();
