// Accessibility fixes for two things Material for MkDocs 9.8 leaves out (axe-core flags
// both as serious): the search dialog has no accessible name, and a table wider than
// its column scrolls inside a box that keyboard users cannot reach.
(function () {
  function fix() {
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (dialog) {
      dialog.setAttribute("aria-label", "Search");
    });
    document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])").forEach(function (box) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "Table (scrolls sideways)");
    });
  }
  // Tables that a page's own script adds later get the same fix.
  new MutationObserver(function () {
    if (document.querySelector(".md-typeset__scrollwrap:not([tabindex])")) fix();
  }).observe(document.documentElement, { childList: true, subtree: true });
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(fix); // after Material has wrapped the tables, on every page
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fix);
  } else {
    fix();
  }
})();
