"""The built site in a real browser: every page, light and dark, desktop and phone.

The site is built once (the ``built_site`` fixture), served on 127.0.0.1 from a thread
and opened in the system's headless Chromium through Playwright. Each page is loaded
once per colour scheme (of the Code pages, only those of :data:`FULL_CODE_PAGES` in the
dark scheme and under axe-core), by two threads that start as soon as the site is built
(:class:`Visits`), from a server that serves an empty search index (:data:`SEARCH_INDEX`);
the tests below assert on what that visit recorded. The pages come from the nav in
mkdocs.yml, and a test checks that the built site has no page the nav leaves out, so a
new page is covered without editing this file.

Where Chromium or Playwright is missing the browser tests skip, saying why; under CI
(``CI`` set) they fail instead, so CI never skips them.
"""

from __future__ import annotations

import contextlib
import html.parser
import json
import queue
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from browser_support import (SCHEMES, built_pages, chromium_path, code_pages_in_full, launch, nav_pages, page_file,
                             page_url, serve)
from conftest import DOCS, when_site_is_built
from sitebuild import code_pages

PAGES = nav_pages()
CODE_FOLDER = code_pages.SECTION.rpartition("/")[0] + "/"
#: The Code pages checked in full (:func:`browser_support.code_pages_in_full`: between them
#: they show every token class of the library's source, and hold every kind of element of
#: the other Code pages): visited in the dark scheme too, and checked by axe-core. The other
#: Code pages are visited in the light scheme for every check but axe's, which is about
#: the template they share. Every other page is visited in both schemes and checked in full.
FULL_CODE_PAGES = code_pages_in_full()


def checked_in_full(page: str) -> bool:
    return not page.startswith(CODE_FOLDER) or page in FULL_CODE_PAGES


VISITED = [(page, scheme) for page in PAGES for scheme in SCHEMES if scheme == "light" or checked_in_full(page)]
MAX_PAGE_BYTES = 1_000_000
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 740}
#: WCAG 2.1: 4.5:1 for text, 3:1 for graphical objects such as axes and ticks.
TEXT_CONTRAST, GRAPHICS_CONTRAST = 4.5, 3.0


# ---- page weight (no browser needed) --------------------------------------------------


def _own_assets(site: Path, page: Path, html: str) -> dict[str, int]:
    """The site's own files a page loads (docs/assets: stylesheet, scripts, the math font
    where the page has math); the theme's bundle is the same on every site and left out."""
    loaded = {}
    for ref in re.findall(r'(?:href|src)="([^"]+\.(?:css|js))"', html):
        path = (page.parent / ref.split("?")[0]).resolve()
        ours = (DOCS / "assets" / path.name).is_file()
        if path.is_file() and path.is_relative_to(site.resolve() / "assets") and ours:
            loaded[path.name] = path.stat().st_size
    if "<math" in html:
        font = site / "assets" / "fonts" / "stix-math.woff2"
        loaded[font.name] = font.stat().st_size
    return loaded


def test_no_page_is_over_one_megabyte(built_site, capsys):
    """Each page's HTML with the site's own assets it loads, the math font included."""
    sizes = {}
    for path in sorted(built_site.rglob("*.html")):
        html = path.read_text()
        assets = sum(_own_assets(built_site, path, html).values())
        sizes[path.relative_to(built_site).as_posix()] = (path.stat().st_size, assets)
    with capsys.disabled():
        print("\nbuilt pages (bytes): HTML + the site's own assets (math font, scripts, stylesheet)")
        for name, (page, assets) in sizes.items():
            print(f"  {page + assets:>9,} = {page:>9,} + {assets:>7,}  {name}")
    heavy = {name: page + assets for name, (page, assets) in sizes.items() if page + assets > MAX_PAGE_BYTES}
    assert not heavy, f"pages over {MAX_PAGE_BYTES:,} bytes: {heavy}"


def test_the_browser_tests_cover_every_built_page(built_site):
    unlisted = sorted(set(built_pages(built_site)) - {page_url(p) for p in PAGES})
    assert not unlisted, f"built pages missing from the nav (so unchecked here): {unlisted}"
    missing = [p for p in PAGES if not page_file(built_site, p).is_file()]
    assert not missing, f"nav pages that were not built: {missing}"


#: The theme's frame around every page's article: header, navigation, contents, footer.
CHROME = (".md-header", ".md-tabs", ".md-sidebar", ".md-footer")
#: The pages on which axe's colour rules check the frame too (elsewhere they check the
#: article alone): the home page and the Code section's, which between them hold every
#: kind of element the frame has on any page (checked on the built HTML below).
CHROME_PAGES = ("index.md", code_pages.SECTION)
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _ElementKinds(html.parser.HTMLParser):
    """The kinds of element (tag, classes, attribute names) in some HTML, every element's or
    only those inside an element of one of the ``within`` classes."""

    def __init__(self, within: set[str] | None = None) -> None:
        super().__init__()
        self.kinds: set[tuple[str, str, tuple[str, ...]]] = set()
        self.within = within
        self.open: list[bool] = []  # for each open element: whether it is within

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        inside = self.within is None or bool(self.open and self.open[-1]) or bool(self.within & set(classes.split()))
        if inside:
            self.kinds.add((tag, classes, tuple(sorted(name for name, _ in attrs))))
        if tag not in _VOID:
            self.open.append(inside)

    def handle_endtag(self, tag: str) -> None:
        if tag not in _VOID and self.open:
            self.open.pop()


def _element_kinds(page: Path, frame: bool = False) -> set[tuple[str, str, tuple[str, ...]]]:
    """The kinds of element of a built page's article, or of its frame (:data:`CHROME`)."""
    text = page.read_text()
    start, end = text.find("<article"), text.find("</article>")
    parser = _ElementKinds({selector.removeprefix(".") for selector in CHROME} if frame else None)
    parser.feed(text[:start] + text[end:] if frame else text[start:end])
    return parser.kinds


def test_the_code_pages_checked_in_full_hold_every_kind_of_element_of_the_others(built_site):
    """The dark scheme and axe-core visit only the Code pages of :data:`FULL_CODE_PAGES`
    (chosen from the library's source by token class): every element of another Code
    page's article (tag, classes, attribute names: a highlighted token's class too) is of a
    kind they hold, on the built HTML."""
    code = [p for p in PAGES if p.startswith(CODE_FOLDER)]
    kinds = {p: _element_kinds(page_file(built_site, p)) for p in code}
    checked = set().union(*(kinds[p] for p in FULL_CODE_PAGES))
    unchecked = {p: sorted(k - checked)[:5] for p, k in kinds.items() if k - checked}
    assert not unchecked, (f"Code pages with kinds of element the pages checked in full lack: {unchecked} "
                           "(browser_support.code_pages_in_full chooses those pages)")
    tokens = {classes for tag, classes, _ in checked if tag == "span"}
    assert len(tokens) > 20 and {"k", "nf", "s2", "c1"} <= tokens
    assert ("h2", "doc doc-heading", ("class", "id")) in checked  # a definition's heading


def test_the_pages_whose_frame_axe_colour_checks_hold_every_kind_of_element_it_has(built_site):
    """axe's colour rules check the theme's frame (header, navigation, footer) on the pages
    of :data:`CHROME_PAGES` only: every kind of element it has on any page is on those."""
    kinds = {p: _element_kinds(page_file(built_site, p), frame=True) for p in PAGES}
    checked = set().union(*(kinds[p] for p in CHROME_PAGES))
    unchecked = {p: sorted(k - checked)[:5] for p, k in kinds.items() if k - checked}
    assert not unchecked, f"pages whose frame has kinds of element CHROME_PAGES lack: {unchecked}"
    assert len(checked) > 40 and any(kind[1] == "md-nav__link md-nav__link--active" for kind in checked)


def test_every_navigation_landmark_has_a_name(built_site):
    """Screen readers list a page's navigation landmarks by name: each ``<nav>`` has an
    ``aria-label``, or an ``aria-labelledby`` whose element has text (Material's section
    with an index page, ``navigation.indexes``, has none: the site does not use it)."""
    unnamed = []
    for path in sorted(built_site.rglob("*.html")):
        html = path.read_text()
        for attrs in re.findall(r"<nav\b([^>]*)>", html):
            label = re.search(r'aria-label="([^"]*)"', attrs)
            labelled_by = re.search(r'aria-labelledby="([^"]*)"', attrs)
            name = label.group(1) if label else ""
            if labelled_by:
                target_id = re.escape(labelled_by.group(1))
                target = re.search(rf'<(\w+)\b[^>]*\bid="{target_id}"[^>]*>(.*?)</\1>', html, re.S)
                name = re.sub(r"<[^>]+>", "", target.group(2)) if target else ""
            if not name.strip():
                unnamed.append(f"{path.relative_to(built_site)}: <nav{attrs}>")
    assert not unnamed, f"navigation landmarks without a name: {unnamed[:5]} ({len(unnamed)} in all)"


# ---- one browser, one visit per page and scheme ------------------------------------------


@pytest.fixture(scope="session")
def site_url(built_site):
    with serve(built_site) as url:
        yield url


@dataclass
class Visit:
    """What one page load saw."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    figures: list[dict] = field(default_factory=list)
    math: dict = field(default_factory=dict)
    code: dict = field(default_factory=dict)
    math_fonts: dict = field(default_factory=dict)  # by width: the font's state, the faces drawn
    axe: list[dict] = field(default_factory=list)
    overflow: dict = field(default_factory=dict)


def _watch(page, base: str, visit: Callable[[], Visit]) -> None:
    """Record, in the visit under way, console errors, failed requests and any request that
    leaves the local server (Chromium's proxy, ``browser_support.OFFLINE_PROXY``, lets none
    through: the site must work offline). Requests are watched, not intercepted: routing
    every request through Playwright cost 6% of a visit's CPU."""
    origin = urlsplit(base).netloc

    def request(r):
        if not r.url.startswith(("data:", "blob:")) and urlsplit(r.url).netloc != origin:
            visit().foreign_requests.append(r.url)

    page.on("request", request)
    page.on("console", lambda m: m.type == "error" and visit().console_errors.append(f"{m.text} ({m.location})"))
    page.on("pageerror", lambda e: visit().console_errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: visit().failed_requests.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and visit().failed_requests.append(f"{r.url}: HTTP {r.status}"))


#: Colour helpers shared by the probes: WCAG relative luminance and contrast ratio, and
#: the first opaque background behind an element.
COLOUR_JS = """
  const rgba = s => {
    const m = /rgba?\\(([^)]+)\\)/.exec(s || '');
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const lum = c => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  // Contrast of colour a drawn over background b (a's alpha composited over b first).
  const contrast = (a, b) => {
    const k = a[3] === undefined ? 1 : a[3];
    const top = [0, 1, 2].map(i => a[i] * k + b[i] * (1 - k));
    const x = lum(top), y = lum(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0.5) return c;
    }
    return [255, 255, 255, 1];
  };
  const paint = (el, prop) => {
    const v = getComputedStyle(el)[prop];
    return v && v !== 'none' ? rgba(v) : null;
  };
"""

PROBE_JS = """
() => {
""" + COLOUR_JS + """
  const figures = (() => {
  return [...document.querySelectorAll('figure.sdpa-figure')].map(fig => {
    // A figure with side-by-side panels carries a stacked copy for phones: check the one shown.
    const svg = [...fig.querySelectorAll('svg')].find(s => s.checkVisibility()) || fig.querySelector('svg');
    const out = {id: fig.id, svg: !!svg};
    if (!svg) return out;
    svg.scrollIntoView();
    const box = svg.getBoundingClientRect();
    const bg = background(fig);
    out.width = box.width; out.height = box.height;
    out.visible = svg.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
    out.background = bg;
    out.color = rgba(getComputedStyle(svg).color);
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    out.texts = texts.length;
    out.text_contrast = Math.min(99, ...texts.map(t => paint(t, 'fill')).filter(Boolean).map(c => contrast(c, bg)));
    // Axis lines and tick marks; grid lines (faint on purpose, stroke-opacity < 1) are left out.
    const axes = [...svg.querySelectorAll('.mpl-axis path, .mpl-axis use')]
      .filter(a => parseFloat(getComputedStyle(a).strokeOpacity) >= 0.9);
    const strokes = axes.map(a => paint(a, 'stroke')).filter(Boolean);
    out.axis_marks = strokes.length;
    out.axis_contrast = Math.min(99, ...strokes.map(c => contrast(c, bg)));
    // Data lines and markers (matplotlib's line2d outside the axes): 3:1 like any graphic.
    const data = [...svg.querySelectorAll('.mpl-line path, .mpl-line use')]
      .filter(a => !a.closest('.mpl-axis') && parseFloat(getComputedStyle(a).strokeOpacity) >= 0.9)
      .map(a => paint(a, 'stroke')).filter(Boolean);
    out.data_lines = data.length;
    out.data_contrast = Math.min(99, ...data.map(c => contrast(c, bg)));
    const label = (svg.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean)
      .map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
    out.alt = label || svg.getAttribute('aria-label') || '';
    out.role = svg.getAttribute('role');
    out.caption = ((fig.querySelector('figcaption') || {}).textContent || '').trim();
    return out;
  });
  })();
  // Code: axe's colour-contrast rule leaves code blocks out (their thousands of token spans
  // cost it seconds a page), so every token colour shown is checked here, on its block's
  // background (one check per token class and block: a class has one colour).
  const code = (() => {
    let worst = {contrast: 99};
    // A Code page's sources are folded (mkdocstrings' <details>): opened, so that they are checked.
    document.querySelectorAll('details.mkdocstrings-source').forEach(d => { d.open = true; });
    for (const block of document.querySelectorAll('.highlight code')) {
      if (!block.checkVisibility()) continue;
      const bg = background(block), seen = new Set();
      for (const el of [block, ...block.querySelectorAll('span')]) {
        const key = el === block ? '' : el.className;
        if (seen.has(key) || !el.textContent.trim()) continue;
        seen.add(key);
        const ratio = contrast(rgba(getComputedStyle(el).color), bg);
        if (ratio < worst.contrast) {
          worst = {contrast: ratio, token: key || 'code', colour: getComputedStyle(el).color, background: bg};
        }
      }
    }
    return worst;
  })();
  const math = (() => {
  const article = document.querySelector('article') || document.body;
  const copy = article.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style, .highlight, .md-source-file').forEach(e => e.remove());
  const text = copy.textContent;
  const tex = [];
  for (const re of [/\\\\[a-zA-Z]{2,}/g, /\\$\\$/g, /\\$[^$\\s][^$\\n]*\\$/g, /\\\\[\\(\\)\\[\\]]/g]) {
    for (const m of text.matchAll(re)) tex.push(text.slice(Math.max(0, m.index - 30), m.index + 40));
  }
  const maths = [...article.querySelectorAll('math')];
  return {
    mathml: maths.length,
    math_contrast: Math.min(99, ...maths.map(m => contrast(rgba(getComputedStyle(m).color), background(m)))),
    errors: article.querySelectorAll('merror').length,
    arithmatex: article.querySelectorAll('.arithmatex').length,
    raw_tex: tex.slice(0, 5),
    // How far each equation number sits from its column's right edge (formulas that fit).
    number_gaps: [...article.querySelectorAll('.sdpa-math mtd[id]')].map(number => {
      const block = number.closest('.sdpa-math');
      return block.scrollWidth > block.clientWidth ? 0
        : block.getBoundingClientRect().right - number.getBoundingClientRect().right;
    }),
  };
  })();
  return {figures, math, code};
}
"""

OVERFLOW_JS = """
() => {
  const root = document.documentElement, limit = root.clientWidth;
  const scrollsItself = el => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX) && e.clientWidth <= limit) return true;
    }
    return false;
  };
  const wide = [];
  for (const el of document.querySelectorAll('.md-content *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > limit + 1 && !scrollsItself(el)) {
      const id = el.id ? '#' + el.id : '';
      const plain = el.className && el.className.baseVal === undefined;
      const cls = plain ? '.' + String(el.className).trim().split(/\\s+/).join('.') : '';
      wide.push(`${el.tagName.toLowerCase()}${id}${cls} right=${Math.round(r.right)}`);
    }
  }
  return {scroll_width: root.scrollWidth, client_width: limit,
          body_scroll_width: document.body.scrollWidth, wide: wide.slice(0, 8)};
}
"""


#: The search index the visits' server serves: the site's configuration with no documents.
#: Material's search worker fetches the one site-wide index and builds it on every page
#: load, a fifth of a visit's CPU; :func:`test_search_finds_the_page` loads the real one.
SEARCH_INDEX = "search/search_index.json"


def _empty_search_index(site: Path) -> bytes:
    return json.dumps({"config": json.loads((site / SEARCH_INDEX).read_text())["config"], "docs": []}).encode()


class Tab:
    """One browser tab for a colour scheme, in which the visits load their pages one after
    another, as a reader goes through the site: a new document each time, the HTTP cache
    warm (an asset that fails, fails on the first page that asks for it). A fresh tab per
    visit would cost a renderer process each: a third of the visits' CPU."""

    def __init__(self, browser, base: str, scheme: str):
        self.base = base
        self.context = browser.new_context(color_scheme=scheme, viewport=DESKTOP, reduced_motion="reduce")
        self.page = self.context.new_page()
        self.visit = Visit("")
        _watch(self.page, base, lambda: self.visit)
        self.cdp = self.context.new_cdp_session(self.page)  # which font Chromium drew a glyph with
        self.cdp.send("DOM.enable")
        self.cdp.send("CSS.enable")

    def load(self, source: str) -> Visit:
        self.visit = Visit(self.base + page_url(source))
        self.page.set_viewport_size(DESKTOP)
        self.page.goto(self.visit.url, wait_until="load")
        # A reader opens the collapsed boxes (setup, proofs, secondary results): what they hold
        # is probed as shown, figures and math included.
        self.page.evaluate("() => document.querySelectorAll('article details').forEach(d => { d.open = true; })")
        return self.visit


#: axe-core runs twice on a page. Every rule but the colour ones checks the whole page,
#: in the light scheme only (the dark one is the same DOM). The colour rules then check it
#: in each scheme, but MathML, the figures' SVG and code blocks: colour-contrast costs
#: seconds on their many small elements, and PROBE_JS checks their colours itself
#: (``math_contrast``; figure text, axes and data lines; every token colour of the code).
#: They also leave out the body rows of a table after its second: every body row has the
#: same styles (the cells differ only in their alignment; the theme stripes no rows), and
#: those rows' cells were half of what colour-contrast checked on the page with the most.
#: They check the theme's frame (:data:`CHROME`: the same on every page but for its links'
#: text) on the pages of :data:`CHROME_PAGES`, and the article alone elsewhere.
#: Hidden tab panels (the source tab of each snippet) are skipped by both: axe ignores
#: hidden content anyway, but finding that out costs seconds on their thousands of tokens.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
AXE_STRUCTURE = ({"exclude": [["[data-axe-hidden]"]]},
                 {"resultTypes": ["violations"], "rules": {rule: {"enabled": False} for rule in COLOUR_RULES}})
AXE_COLOUR = ({"exclude": [["math"], ["figure.sdpa-figure svg"], [".highlight code"], ["[data-axe-hidden]"],
                           [".md-typeset table tbody tr:nth-child(n+3)"]]},
              {"resultTypes": ["violations"], "runOnly": {"type": "rule", "values": COLOUR_RULES}})
MARK_HIDDEN_TABS_JS = """
() => document.querySelectorAll('.tabbed-block').forEach(block => {
  if (!block.checkVisibility()) block.setAttribute('data-axe-hidden', '');
})
"""


def _axe(page, script: str, scheme: str, frame: bool) -> list[dict]:
    """axe-core's violations on the page loaded in ``page`` (see :data:`AXE_STRUCTURE`);
    the colour rules check the frame too where ``frame`` is set."""
    page.evaluate(MARK_HIDDEN_TABS_JS)
    page.evaluate(script)
    context, options = AXE_COLOUR
    colour = (context if frame else {"exclude": context["exclude"] + [[selector] for selector in CHROME]}, options)
    runs = [AXE_STRUCTURE, colour] if scheme == "light" else [colour]
    return [violation for context, options in runs
            for violation in page.evaluate("([context, options]) => axe.run(context, options)",
                                           [context, options])["violations"]]


#: An identifier, an operator and a number of a formula: each must be drawn with the
#: shipped STIX Math, not a system fallback.
MATH_SELECTORS = ("math mi", ".sdpa-math math mo", ".sdpa-math math mn")


def _math_fonts(tab: Tab) -> dict:
    """Whether the math font loaded, and the faces Chromium drew each of MATH_SELECTORS with."""
    tab.page.evaluate("document.fonts.ready")
    loaded = tab.page.evaluate("[...document.fonts].filter(f => f.family.includes('SDPA Math')).map(f => f.status)")
    root = tab.cdp.send("DOM.getDocument")["root"]["nodeId"]
    used = {}
    for selector in MATH_SELECTORS:
        node = tab.cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if node:
            fonts = tab.cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            used[selector] = [(f["postScriptName"], f["isCustomFont"]) for f in fonts]
    return {"loaded": loaded, "used": used}


def _visit(tab: Tab, axe_script: str, source: str, scheme: str) -> Visit:
    """Load one page at desktop width, probe it, run axe (on a page checked in full), then
    narrow it to 375 px."""
    record, page = tab.load(source), tab.page
    probed = page.evaluate(PROBE_JS)
    record.figures, record.math, record.code = probed["figures"], probed["math"], probed["code"]
    violations = _axe(page, axe_script, scheme, source in CHROME_PAGES) if checked_in_full(source) else []
    record.axe = [
        {"id": v["id"], "impact": v["impact"], "help": v["help"],
         "nodes": [n["target"] for n in v["nodes"][:3]]}
        for v in violations
    ]
    if record.math["mathml"]:
        record.math_fonts["desktop"] = _math_fonts(tab)
    page.set_viewport_size(PHONE)
    record.overflow = page.evaluate(OVERFLOW_JS)
    if record.math["mathml"]:
        record.math_fonts["phone"] = _math_fonts(tab)
    page.wait_for_load_state("networkidle")  # every request finished (or failed) before the next page
    return record


BROWSERS = 2  # two cores: see Visits


class Visits:
    """The visits the selected tests read (:data:`VISITED`), made in :data:`BROWSERS` threads
    (each with its own server, Playwright and Chromium, and a tab per colour scheme) that
    take them in turn from one queue, from the moment the session's site is built, while
    the other tests run; the tests that read a visit run last (``conftest.py`` orders them).
    Two browsers finish them about 20 s sooner than one, for the same CPU; a third costs
    7-12 core-s more and saves no time in the suite, which is bound by its CPU."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, str], Visit] = {}
        self.failed: dict[tuple[str, str], BaseException] = {}
        self.error: BaseException | None = None  # a thread could not start a browser
        self.running = 0
        self.finished = False
        self.stopping = False
        self.changed = threading.Condition()
        self.threads: list[threading.Thread] = []
        self.queue: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()

    def start(self, site: Path, items=()) -> None:
        """Visit the pages and schemes of ``items`` (the selected tests), or all of them."""
        wanted = {(item.callspec.params["source"], item.callspec.params["scheme"])
                  for item in items if "source" in getattr(getattr(item, "callspec", None), "params", {})}
        if self.threads or chromium_path() is None:
            return
        for key in VISITED:  # in the order the tests read them
            if not wanted or key in wanted:
                self.queue.put(key)
        self.running = BROWSERS
        for number in range(self.running):
            thread = threading.Thread(target=self._run, args=(site,), name=f"page visits {number}", daemon=True)
            self.threads.append(thread)
            thread.start()

    def _run(self, site: Path) -> None:
        try:
            from axe_playwright_python.sync_playwright import Axe
            from playwright.sync_api import sync_playwright

            replaced = {SEARCH_INDEX: _empty_search_index(site)}
            with serve(site, replaced) as base, sync_playwright() as playwright:
                browser, axe_script = launch(playwright), Axe().axe_script
                tabs: dict[str, Tab] = {}
                while not self.stopping:
                    try:
                        key = self.queue.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        if key[1] not in tabs:
                            tabs[key[1]] = Tab(browser, base, key[1])
                        record = _visit(tabs[key[1]], axe_script, *key)
                    except Exception as error:  # noqa: BLE001 - handed to that visit's tests
                        self.failed[key] = error
                        continue
                    with self.changed:
                        self.done[key] = record
                        self.changed.notify_all()
                browser.close()
        except BaseException as error:  # noqa: BLE001 - handed to the tests that wait
            self.error = error
        finally:
            with self.changed:
                self.running -= 1
                self.finished = self.running == 0
                self.changed.notify_all()

    def stop(self) -> None:
        """At the session's end: no more visits; wait for the browser to close (a thread
        still inside Playwright as the interpreter exits can crash it)."""
        self.stopping = True
        for thread in self.threads:
            thread.join(timeout=120)

    def get(self, source: str, scheme: str) -> Visit:
        key = (source, scheme)
        with self.changed:
            self.changed.wait_for(lambda: key in self.done or key in self.failed or self.finished, timeout=900)
        if key not in self.done:
            raise RuntimeError(f"the visit of {source} ({scheme}) failed") from self.failed.get(key, self.error)
        return self.done[key]


VISITS = Visits()
when_site_is_built("visit", VISITS.start, VISITS.stop)


@pytest.fixture(scope="session")
def visit(browser_available, built_site):
    """One visit per page and scheme (desktop width, then 375 px), made in the visits'
    thread and shared by the tests below."""
    VISITS.start(built_site)  # a no-op: the build started it (for the selected tests)
    return VISITS.get


CASES = [pytest.param(p, s, id=f"{page_url(p) or 'home'}-{s}") for p, s in VISITED]


@pytest.mark.parametrize("source, scheme", CASES)
def test_page_loads_cleanly_and_offline(visit, source, scheme):
    seen = visit(source, scheme)
    assert not seen.console_errors, f"{seen.url}: console errors: {seen.console_errors}"
    assert not seen.failed_requests, f"{seen.url}: failed requests: {seen.failed_requests}"
    assert not seen.foreign_requests, f"{seen.url}: requests to other hosts: {seen.foreign_requests}"


@pytest.mark.parametrize("source, scheme", CASES)
def test_figures_are_visible_readable_and_described(visit, source, scheme):
    seen = visit(source, scheme)
    for fig in seen.figures:
        where = f"{seen.url}#{fig['id']} ({scheme})"
        assert fig["svg"], f"{where}: figure without an inline SVG"
        assert fig["visible"] and fig["width"] > 50 and fig["height"] > 50, f"{where}: not visible: {fig}"
        assert fig["texts"] > 0, f"{where}: no text (labels, ticks) in the figure"
        assert fig["text_contrast"] >= TEXT_CONTRAST, (
            f"{where}: figure text contrast {fig['text_contrast']:.2f} < {TEXT_CONTRAST} on {fig['background']}")
        assert fig["axis_marks"] > 0, f"{where}: no axis lines or ticks found"
        assert fig["axis_contrast"] >= GRAPHICS_CONTRAST, (
            f"{where}: axis contrast {fig['axis_contrast']:.2f} < {GRAPHICS_CONTRAST} on {fig['background']}")
        assert fig["data_contrast"] >= GRAPHICS_CONTRAST, (
            f"{where}: a data line reads at {fig['data_contrast']:.2f}:1 < {GRAPHICS_CONTRAST} on {fig['background']}")
        assert fig["role"] == "img" and len(fig["alt"]) >= 20, f"{where}: no text alternative: {fig['alt']!r}"
        assert fig["caption"], f"{where}: no caption"


def _source_has_math(source: str) -> bool:
    path = DOCS / source
    if path.suffix != ".md" or not path.is_file():
        return False
    text = re.sub(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", "", path.read_text(), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return bool(re.search(r"\$\$|(?<![\\$])\$[^$\s][^$\n]*\$", text))


@pytest.mark.parametrize("source, scheme", CASES)
def test_math_is_typeset_and_readable(visit, source, scheme):
    seen = visit(source, scheme)
    assert not seen.math["raw_tex"], f"{seen.url}: raw TeX left in the text: {seen.math['raw_tex']}"
    assert seen.math["arithmatex"] == 0, f"{seen.url}: math left for a script to typeset"
    assert seen.math["errors"] == 0, f"{seen.url}: MathML with <merror>"
    if _source_has_math(source):
        assert seen.math["mathml"] > 0, f"{seen.url}: the Markdown has math but the page has no <math>"
    if seen.math["mathml"]:
        assert seen.math["math_contrast"] >= TEXT_CONTRAST, f"{seen.url} ({scheme}): math contrast {seen.math}"
    gaps = seen.math["number_gaps"]
    assert all(gap < 2 for gap in gaps), f"{seen.url}: equation numbers not at the right margin: {gaps}"
    if source == "derivation.md":
        assert gaps, "the derivation's equations are numbered"


@pytest.mark.parametrize("source, scheme", CASES)
def test_math_is_drawn_with_the_shipped_font(visit, source, scheme):
    """At desktop width and at 375 px: STIX Math, served by the site, not a system font."""
    seen = visit(source, scheme)
    for width, fonts in seen.math_fonts.items():
        where = f"{seen.url} ({scheme}, {width})"
        assert fonts["loaded"] == ["loaded"], f"{where}: the math font did not load: {fonts['loaded']}"
        assert fonts["used"], f"{where}: no identifier, operator or number found in the math"
        if source == "derivation.md":  # a page with all three kinds
            assert set(fonts["used"]) == set(MATH_SELECTORS), where
        for selector, faces in fonts["used"].items():
            assert faces and all(custom and name == "STIXMath-Regular" for name, custom in faces), (
                f"{where}: {selector} drawn with {faces}")


@pytest.mark.parametrize("source, scheme", CASES)
def test_code_is_readable(visit, source, scheme):
    code = visit(source, scheme).code
    assert code["contrast"] >= TEXT_CONTRAST, f"{source} ({scheme}): a code token reads at {code}"


@pytest.mark.parametrize("source, scheme", [case for case in CASES if checked_in_full(case.values[0])])
def test_no_accessibility_violation(visit, source, scheme):
    """Of any impact: critical, serious, moderate or minor."""
    seen = visit(source, scheme)
    assert not seen.axe, f"{seen.url} ({scheme}): axe-core found: {seen.axe}"


@pytest.mark.parametrize("source, scheme", CASES)
def test_nothing_scrolls_sideways_on_a_phone(visit, source, scheme):
    seen = visit(source, scheme)
    layout = seen.overflow
    assert layout["scroll_width"] <= layout["client_width"], (
        f"{seen.url} at {PHONE['width']} px scrolls sideways: {layout}")
    assert not layout["wide"], f"{seen.url} at {PHONE['width']} px: elements stick out: {layout['wide']}"


#: What a reader types in the search field, and a page it must list.
SEARCHES = [("variance", "derivation/"), ("QK-norm", "qk-norm/")]


def test_search_finds_the_page(browser, site_url):
    """Each query typed in the header's search field, as a reader would, on one page load
    (the search index is built once a page, in a web worker)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    found = {}
    try:
        page.goto(site_url, wait_until="load")
        box = page.locator("input.md-search__input")
        results = page.locator(".md-search-result__item a, .md-search-result__link")
        for query, expected in SEARCHES:
            box.click()
            box.fill("")
            box.press_sequentially(query, delay=20)
            listed = page.locator(f'.md-search-result__item a[href*="{expected}"], '
                                  f'.md-search-result__link[href*="{expected}"]')
            with contextlib.suppress(PlaywrightTimeout):  # the assertion below says what was listed
                listed.first.wait_for(timeout=10_000, state="attached")
            found[query] = [urlsplit(h).path for h in results.evaluate_all("els => els.map(e => e.href)")]
    finally:
        context.close()
    for query, expected in SEARCHES:
        assert any(h.rstrip("/").endswith(expected.rstrip("/")) for h in found.get(query, [])), (
            f"search for {query!r} did not list {expected}: {found}")


def test_a_glossary_term_shows_its_definition_on_keyboard_focus(browser, site_url):
    from sitebuild.glossary import definitions

    glossary, _ = definitions((DOCS.parent / "includes" / "glossary.md").read_text().splitlines())
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    try:
        page.goto(site_url + "derivation/", wait_until="load")
        focusable = page.locator(".md-content abbr[tabindex='0']").all_text_contents()
        assert focusable and len(focusable) == len(set(focusable)), f"one tab stop per term: {focusable}"
        for _ in range(80):  # Tab through the page, as a keyboard user would, to the first term
            page.keyboard.press("Tab")
            term = page.evaluate("document.activeElement.tagName === 'ABBR' && document.activeElement.textContent")
            if term:
                break
        assert term, "no glossary term reached with the Tab key"
        tooltip = page.locator("[role=tooltip]").filter(has_text=glossary.get(term, glossary.get(term[:-1], "?"))[:40])
        tooltip.first.wait_for(state="visible", timeout=5_000)
    finally:
        context.close()


#: Each figure's caption and the first label drawn inside it, and the source tabs' code.
PRINT_PROBE_JS = """
() => ({
  figures: [...document.querySelectorAll('figure.sdpa-figure')].map(fig => ({
    id: fig.id,
    caption: (fig.querySelector('figcaption').firstChild.textContent || '').trim(),
    label: [...fig.querySelectorAll('.sdpa-wide svg text, svg text')].map(t => t.textContent.trim())
      .filter(t => t.length > 6)[0] || '',
  })),
  code: [...document.querySelectorAll('.tabbed-block:not(:first-child) code')].map(c => c.textContent)
    .join('\\n').split('\\n').map(line => line.trim()).filter(line => line.length > 30),
})
"""


def test_a_page_prints_its_figures_and_math_without_navigation(browser, site_url):
    """The print stylesheet is the same in both schemes, and a page prints in the light
    scheme's ink from either (the next test), so one scheme's PDF is read here."""
    import io

    import pypdf

    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    try:
        page.goto(site_url + "derivation/", wait_until="networkidle")
        probe = page.evaluate(PRINT_PROBE_JS)
        page.emulate_media(media="print")
        shown = page.evaluate("""() => ['.md-header', '.md-sidebar--primary', '.md-sidebar--secondary',
          '.md-search', '.md-footer', '.tabbed-labels', '.sdpa-downloads']
          .filter(s => [...document.querySelectorAll(s)].some(e => e.checkVisibility()))""")
        pdf = page.pdf(format="A4")
    finally:
        context.close()
    text = "".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    flat = re.sub(r"\s+", "", text)
    assert not shown, f"printed: {shown}"
    assert len(probe["figures"]) >= 2
    for fig in probe["figures"]:
        assert re.sub(r"\s+", "", fig["caption"])[:60] in flat, f"{fig['id']}: caption not printed"
        assert re.sub(r"\s+", "", fig["label"]) in flat, f"{fig['id']}: the drawing ({fig['label']!r}) not printed"
    assert "𝑑𝑘" in text or "√" in text, "no math in the printed page"
    assert "Search" not in text and "Table of contents" not in text
    assert probe["code"] and not any(re.sub(r"\s+", "", line) in flat for line in probe["code"][:20]), (
        "a snippet's source tab was printed")


#: What a printed page is inked with: the page, its text, a figure's drawing and the math.
PRINT_INK_JS = """
() => {
  const colour = (selector, property) => getComputedStyle(document.querySelector(selector))[property];
  return {page: colour('body', 'backgroundColor'), text: colour('.md-content p', 'color'),
          figure: colour('figure.sdpa-figure svg', 'color'), math: colour('.md-content math', 'color')};
}
"""


def test_a_page_prints_in_dark_ink_on_white_from_either_scheme(browser, site_url):
    """Paper is white: a reader in the dark scheme prints what one in the light scheme does."""
    inks = {}
    for scheme in SCHEMES:
        context = browser.new_context(color_scheme=scheme, viewport=DESKTOP)
        page = context.new_page()
        try:
            page.goto(site_url + "derivation/", wait_until="load")
            page.emulate_media(media="print", color_scheme=scheme)
            inks[scheme] = page.evaluate(PRINT_INK_JS)
        finally:
            context.close()
    assert inks["dark"] == inks["light"], inks
    assert inks["light"]["page"] == "rgb(255, 255, 255)", inks
    assert all(ink.startswith("rgba(0, 0, 0,") for name, ink in inks["light"].items() if name != "page"), inks


def test_the_explorable_figure_follows_its_controls_from_the_keyboard(browser, site_url):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(site_url + "derivation/", wait_until="load")
        figure = page.locator("figure.sdpa-explorable").first
        data = json.loads(figure.locator("script.sdpa-explorable-data").text_content())
        heights = lambda: figure.locator("rect").evaluate_all("rs => rs.map(r => +r.getAttribute('height'))")  # noqa: E731
        readout = figure.locator("[aria-live=polite]")
        start = (heights(), readout.text_content())
        assert len(start[0]) == data["n_keys"] and "dₖ = 64" in start[1]

        figure.locator("input[type=range]").focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        moved = (heights(), readout.text_content())
        assert moved != start and "dₖ = 512" in moved[1]
        at = data["d_k"].index(512)
        assert f"entropy {data['arms']['1/sqrt(d_k)']['entropy'][at]:.2f} nats" in moved[1]

        figure.locator("input[type=radio]:checked").focus()
        page.keyboard.press("ArrowLeft")  # the previous rule: no factor
        unscaled = (heights(), readout.text_content())
        assert unscaled != moved and "logits × no factor" in unscaled[1]
        assert max(unscaled[0]) > 0.9 * max(start[0] + moved[0] + unscaled[0])
        fill = figure.locator("rect").first.evaluate("r => getComputedStyle(r).fill")
        assert fill == page.evaluate("""() => { const p = document.createElement('p');
          p.style.color = 'var(--sdpa-c0, #4c8fe0)'; document.body.append(p);
          const c = getComputedStyle(p).color; p.remove(); return c; }""")
    finally:
        context.close()
