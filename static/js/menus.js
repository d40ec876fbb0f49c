// "…" menus (WAI-ARIA's menu button pattern): a button with aria-haspopup="menu" opens the list it
// controls and focuses its first item (ArrowUp: the last); arrows, Home and End move; Escape closes
// and gives the button back the focus; Tab, a click elsewhere, or choosing an item closes it.
(function () {
  "use strict";

  var current = null;  // the open menu's {button, menu}

  function entries(menu) {  // the items shown at this width
    return Array.prototype.filter.call(menu.querySelectorAll('[role="menuitem"]'),
      function (item) { return item.getClientRects().length > 0; });
  }

  function openMenu(button, last) {
    closeMenu(false);
    var menu = document.getElementById(button.getAttribute("aria-controls"));
    if (!menu) return;
    menu.hidden = false;
    button.setAttribute("aria-expanded", "true");
    current = { button: button, menu: menu };
    reveal(menu);
    var items = entries(menu);
    if (items.length) items[last ? items.length - 1 : 0].focus({ preventScroll: true });
  }

  // The menu of the sidebar's last item shows whole: its own scroller moves, never the page's
  // frame (scrollIntoView would move the overflow-hidden layout too).
  function reveal(menu) {
    var scroller = menu.parentElement;
    while (scroller && scroller !== document.body && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowY)) {
      scroller = scroller.parentElement;
    }
    if (!scroller || scroller === document.body) return;
    var below = menu.getBoundingClientRect().bottom - scroller.getBoundingClientRect().bottom;
    if (below > 0) scroller.scrollTop += below + 8;
  }

  function closeMenu(refocus) {
    if (!current) return false;
    var open = current, active = document.activeElement;
    var focusWasInside = open.menu.contains(active) || active === document.body;
    current = null;
    open.menu.hidden = true;
    open.button.setAttribute("aria-expanded", "false");
    // Back to the button, unless the chosen item sent the focus elsewhere (the share panel).
    if (refocus && focusWasInside && open.button.isConnected) open.button.focus();
    return true;
  }

  function move(step, to) {
    var items = entries(current.menu), at = items.indexOf(document.activeElement);
    var next = to === "first" ? 0 : to === "last" ? items.length - 1 : (at + step + items.length) % items.length;
    if (items[next]) items[next].focus();
  }

  function menuButton(target) { return target.closest ? target.closest('[aria-haspopup="menu"]') : null; }

  document.addEventListener("click", function (event) {
    var button = menuButton(event.target);
    if (button) {
      if (current && current.button === button) closeMenu(true);
      else openMenu(button, false);
      return;
    }
    if (!current) return;
    // An item was chosen (htmx and the browser act on it first), or the click fell elsewhere.
    var chosen = event.target.closest && event.target.closest('[role="menuitem"]');
    closeMenu(!!chosen && current.menu.contains(chosen));
  });

  // Capture: the menu's keys are its own, before the drawer's Escape or the Stop shortcut see them.
  document.addEventListener("keydown", function (event) {
    var key = event.key, button = menuButton(event.target);
    if (button && (key === "ArrowDown" || key === "ArrowUp")) {
      event.preventDefault();
      openMenu(button, key === "ArrowUp");
      return;
    }
    if (!current || !current.menu.contains(event.target)) return;
    if (key === "Escape") closeMenu(true);
    else if (key === "ArrowDown") move(1);
    else if (key === "ArrowUp") move(-1);
    else if (key === "Home" || key === "PageUp") move(0, "first");
    else if (key === "End" || key === "PageDown") move(0, "last");
    else if (key === " " && event.target.tagName === "A") event.target.click();  // a link's Space
    else if (key === "Tab") { closeMenu(true); return; }  // the Tab then moves on from the button
    else return;
    event.preventDefault();
    event.stopPropagation();
  }, true);

  // A swap that takes the open menu away (a new sidebar) leaves nothing open behind.
  document.addEventListener("htmx:afterSwap", function () {
    if (current && !current.menu.isConnected) current = null;
  });
})();
