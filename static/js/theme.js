// Light or dark: the system's colour scheme until the reader picks one with the top bar's toggle,
// then that choice, kept in this browser (localStorage). Loaded in <head>, before the page paints.
(function () {
  "use strict";
  var KEY = "nimbus-theme", root = document.documentElement;
  var system = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }
  }
  function isDark() {
    var choice = root.dataset.theme;
    return choice ? choice === "dark" : !!(system && system.matches);
  }
  function sync() {
    document.querySelectorAll(".theme-toggle").forEach(function (button) {
      button.setAttribute("aria-pressed", isDark() ? "true" : "false");
    });
  }

  var choice = stored();
  if (choice === "dark" || choice === "light") root.dataset.theme = choice;

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".theme-toggle") : null;
    if (!button) return;
    var next = isDark() ? "light" : "dark";
    root.dataset.theme = next;
    try { localStorage.setItem(KEY, next); } catch (e) { /* private mode: this page only */ }
    sync();
  });
  if (system && system.addEventListener) system.addEventListener("change", sync);
  document.addEventListener("DOMContentLoaded", sync);
})();
