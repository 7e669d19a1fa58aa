// Glossary terms take keyboard focus (below). Then fixes for things Material for MkDocs 9.8
// leaves out. axe-core flags the first two as serious: the search dialog has no accessible
// name, and a table wider than its column scrolls inside a box that keyboard users cannot
// reach. The third, moderate: each code block's copy button sits in a <nav> of its own, one
// more unnamed navigation landmark per block; it is a button bar, so it gets role="none"
// (its button stays). The fourth stands in for the
// `autocomplete="off"` that sitebuild/valid_html.py removes from Material's checkbox
// toggles (invalid there): a page reloaded or restored from the back-forward cache opens
// with the navigation drawer and the search closed.
(function () {
  // Boxes that scroll sideways: Material's table wrapper.
  var SCROLL_BOXES = ".md-typeset__scrollwrap:not([tabindex])";
  // Material's button bar on each code block, which it makes as the page loads.
  var CODE_BARS = "nav.md-code__nav:not([role])";
  function fix() {
    // Glossary terms (abbr, sitebuild/glossary.py): the first occurrence of each on the page
    // takes keyboard focus, which shows its definition; one tab stop per term.
    if (!document.querySelector(".md-content abbr[tabindex]")) {
      var seen = {};
      document.querySelectorAll(".md-content abbr").forEach(function (abbr) {
        if (seen[abbr.textContent]) return;
        seen[abbr.textContent] = true;
        abbr.setAttribute("tabindex", "0");
      });
    }
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (dialog) {
      dialog.setAttribute("aria-label", "Search");
    });
    document.querySelectorAll(SCROLL_BOXES).forEach(function (box) {
      box.setAttribute("tabindex", "0"); // arrow keys scroll it once it has focus
    });
    document.querySelectorAll(CODE_BARS).forEach(function (bar) {
      bar.setAttribute("role", "none");
    });
  }
  // Tables and code blocks that scripts add later get the same fixes.
  new MutationObserver(function () {
    if (document.querySelector(SCROLL_BOXES + ", " + CODE_BARS)) fix();
  }).observe(document.documentElement, { childList: true, subtree: true });
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(fix); // after Material has wrapped the tables, on every page
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fix);
  } else {
    fix();
  }
  window.addEventListener("pageshow", function () {
    // Those two only: a section's toggle (the Code section, open on its own pages) stays as the page set it.
    document.querySelectorAll("input#__drawer, input#__search").forEach(function (toggle) {
      toggle.checked = false;
    });
  });
})();
