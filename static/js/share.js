// Sharing from the conversation's "…" menu (templates/chat/_transfer_menu.html): its item opens the
// share panel, Escape or ✕ closes it with the focus back on the menu's button; Copy link puts the
// address on the clipboard, or selects it where the browser does not allow that (plain http, say).
(function () {
  "use strict";

  function sheet() { return document.getElementById("share-sheet"); }
  function menuButton() { return document.getElementById("conversation-menu-button"); }

  function openSheet() {
    var s = sheet();
    if (!s) return;
    s.hidden = false;
    var first = s.querySelector(".share-url, .share-create");
    if (first) first.focus();
  }
  function closeSheet() {
    var s = sheet();
    if (!s || s.hidden) return false;
    s.hidden = true;
    if (menuButton()) menuButton().focus();
    return true;
  }

  function copy(button) {
    var input = button.parentElement.querySelector(".share-url");
    var done = function () {
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = "Copy link"; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(button.dataset.copy).then(done, function () { input.select(); });
    } else {
      input.focus();
      input.select();
      if (document.execCommand("copy")) done();
    }
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target : null;
    if (!target) return;
    if (target.closest(".share-open")) openSheet();
    else if (target.closest(".share-close")) closeSheet();
    else if (target.closest(".share-copy")) copy(target.closest(".share-copy"));
    else if (sheet() && !sheet().hidden && !sheet().contains(target) && target.isConnected) sheet().hidden = true;
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !event.shiftKey && sheet() && sheet().contains(event.target) && closeSheet()) {
      event.preventDefault();
      event.stopPropagation();
    }
  }, true);
})();
