// The chat menu's share links (templates/chat/_share_panel.html): Copy link puts the address on
// the clipboard, or selects it where the browser does not allow that (plain http, say).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".share-copy") : null;
    if (!button) return;
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
  });
})();
