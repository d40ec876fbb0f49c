// Tell the server the reader's time zone (a cookie), so times and "Today" in the sidebar are the
// reader's own from the next page on. Without script, pages use the shop's zone.
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (error) { return; }
  if (!zone || !/^[A-Za-z0-9_+\/-]{1,64}$/.test(zone)) return;
  var cookie = "nimbus_tz=" + zone;
  if (document.cookie.split("; ").indexOf(cookie) === -1) {
    document.cookie = cookie + "; path=/; max-age=31536000; SameSite=Lax";
  }
})();
