"""Figures on the built pages: themed inline SVG, and each figure's SVG and CSV to download.

A MkDocs hook (listed in ``mkdocs.yml``). A snippet prints an ``sdpa.Figure``: the SVG as
matplotlib wrote it, the caption, and the plotted numbers as CSV in a
``<script type="text/csv">`` data block (see ``snippets/sdpa/figures.py``). For every
such figure on a page, this step

* writes ``figures/<name>.svg`` (the figure as drawn, wide layout) and
  ``figures/<name>.csv`` beside the page, byte for byte the same on every build;
* replaces the data block by links to both, at the end of the caption;
* writes ``d_k`` as ``dₖ`` in the caption and the text alternative (``sitebuild/readable.py``),
  and in the caption of an explorable figure (``sdpa.figures.explorable``);
* makes the inline SVG follow the page: text, axes and ticks take the page's text colour
  (``currentColor``), each palette colour becomes ``var(--sdpa-cN, colour)`` so that
  ``docs/assets/site.css`` can give the light scheme darker shades, every id is prefixed
  with the figure's name (several figures share a page), coordinates are kept to 0.1 pt,
  and CSS sizes it.

It works on the page's HTML alone, so cached or parallel snippet runs need nothing more.
The drawings stand aside while the search plugin reads the page (see :data:`_ASIDE`).
"""

from __future__ import annotations

import re
from pathlib import Path

from sdpa.style import DATA_CLASS, EXPLORABLE_CLASS, FIGURE_CLASS, FIGURE_ID_PREFIX, INK, PALETTE
from sitebuild.readable import readable

_OPEN = f'<figure class="{FIGURE_CLASS}"'
FIGURE = re.compile(
    rf'{re.escape(_OPEN)} id="{re.escape(FIGURE_ID_PREFIX)}(?P<name>[a-z0-9-]+)">(?P<body>.*?)</figure>', re.S)
# Attributes in any order: the notebook page's HTML passes through an HTML parser that sorts them.
DATA = re.compile(rf'\s*<script\b[^>]*\bclass="{re.escape(DATA_CLASS)}"[^>]*>\n(?P<csv>.*?)</script>', re.S)
SVG = re.compile(r"<svg\b.*?</svg>", re.S)
EXPLORABLE_CAPTION = re.compile(
    rf'(<figure class="{re.escape(EXPLORABLE_CLASS)}"[^>]*>.*?)(<figcaption>.*?</figcaption>)', re.S)
FOLDER = "figures"


#: Each page's drawings, set aside from ``on_page_content`` to ``on_post_page``: in
#: between, Material's search plugin parses the page's HTML for its index, and a page's
#: SVG (tens of thousands of tags of paths and tick marks) holds no words a reader would
#: search for but takes most of that parsing time. A comment holds each one's place.
_ASIDE: dict[str, list[str]] = {}
PLACE = re.compile(r"<!-- sdpa-drawing (\d+) -->")


def on_page_content(html: str, page, config, files) -> str:
    html = EXPLORABLE_CAPTION.sub(lambda m: m[1] + _outside_code(m[2], readable), html)
    if _OPEN not in html:
        return html
    folder = Path(config.site_dir) / page.url / FOLDER
    html = FIGURE.sub(lambda match: _figure(match, folder), html)
    drawings = _ASIDE[page.file.src_uri] = []

    def aside(svg: re.Match) -> str:
        drawings.append(svg[0])
        return f"<!-- sdpa-drawing {len(drawings) - 1} -->"

    return SVG.sub(aside, html)


def on_post_page(output: str, page, config) -> str:
    """Put the page's drawings back in their places."""
    drawings = _ASIDE.pop(page.file.src_uri, [])
    return PLACE.sub(lambda place: drawings[int(place[1])], output) if drawings else output


def _figure(match: re.Match, folder: Path) -> str:
    name, body = match.group("name"), match.group("body")
    data = DATA.search(body)
    body = re.sub(r"(<title\b[^>]*>)(.*?)(</title>)", lambda m: m[1] + readable(m[2]) + m[3], body, flags=re.S)
    body = re.sub(r"<figcaption>.*?</figcaption>", lambda m: _outside_code(m[0], readable), body, flags=re.S)
    svgs = [compact(svg) for svg in SVG.findall(body)]
    if data is None or not svgs:
        return match.group(0)  # not made by sdpa.Figure: leave it as it is
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.svg").write_text(_standalone(svgs[0]), encoding="utf-8")
    (folder / f"{name}.csv").write_text(data.group("csv"), encoding="utf-8")
    body = DATA.sub("", body)
    links = (f' <span class="sdpa-downloads">Download: <a href="{FOLDER}/{name}.svg" download>'
             f'figure (SVG)</a> · <a href="{FOLDER}/{name}.csv" download>data (CSV)</a></span>')
    body = body.replace("</figcaption>", links + "</figcaption>", 1)
    # The first SVG is the wide layout, a second one the stacked copy for phones.
    inline = iter(themed(svg, f"{name}-narrow" if i else name) for i, svg in enumerate(svgs))
    body = SVG.sub(lambda _: next(inline), body)
    return f'{_OPEN} id="{FIGURE_ID_PREFIX}{name}">{body}</figure>'


_CLASSES = {"matplotlib.axis": "mpl-axis", "line2d": "mpl-line"}


def _outside_code(html: str, change) -> str:
    parts = re.split(r"(<code>.*?</code>)", html, flags=re.S)
    return "".join(part if part.startswith("<code>") else change(part) for part in parts)


def compact(svg: str) -> str:
    """Coordinates to 0.1 pt (finer than a pixel), in attributes only (never in text), and
    one path per line."""
    svg = re.sub(r'="([^"]*)"', lambda m: '="' + re.sub(r"(\d+\.\d)\d+", r"\1", m.group(1)) + '"', svg)
    return re.sub(r" ?\n(?=[MLCQZz] |z)", " ", svg)


def _standalone(svg: str) -> str:
    return f'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n{svg}\n'


_GROUP = re.compile(r"<g>\n?|<g\s[^>]*>|</g>\n?")


def _without_bare_groups(svg: str) -> str:
    """Drop every ``<g>`` that has no attribute left (matplotlib wraps each artist in one,
    named by an ``id`` nothing refers to): it draws nothing, and half a figure's elements
    were such groups, each one more node for the browser to lay out on every page."""
    kept: list[bool] = []

    def group(tag: re.Match) -> str:
        if tag.group(0).startswith("</g>"):
            return tag.group(0) if kept.pop() else ""
        if tag.group(0).endswith("/>"):  # an empty group: nothing to match
            return tag.group(0)
        kept.append(not tag.group(0).startswith("<g>"))
        return tag.group(0) if kept[-1] else ""

    return _GROUP.sub(group, svg)


def themed(svg: str, prefix: str) -> str:
    """An SVG as matplotlib wrote it (under ``sdpa.figures.STYLE``), made to follow the page."""
    index = {colour.lower(): i for i, colour in enumerate(PALETTE)}

    def palette(style: re.Match) -> str:
        def swap(colour: re.Match) -> str:
            i = index.get(colour.group(0).lower())
            return colour.group(0) if i is None else f"var(--sdpa-c{i}, {colour.group(0)})"

        return re.sub(r"#[0-9a-fA-F]{6}\b", swap, style.group(0))

    svg = re.sub(r"<style type=\"text/css\">.*?</style>\s*", "", svg, flags=re.S)  # site.css has it
    svg = svg.replace(INK, "currentColor")
    svg = re.sub(r'style="[^"]*"', palette, svg)
    # Lighter: no indentation, no no-op rotation, and text takes its font and its colour
    # from site.css (the page's text colour) unless it has a colour of its own.
    svg = re.sub(r"\n[ \t]+", "\n", svg)
    svg = re.sub(r' transform="rotate\(-?0 [\d.]+ [\d.]+\)"', "", svg)
    svg = re.sub(r"(<text [^>]*style=\"[^\"]*?)font-family: [^;\"]*;? ?", r"\1", svg)
    svg = re.sub(r"(<text [^>]*style=\"[^\"]*?);? ?fill: currentColor", r"\1", svg)
    # Ids: only those something refers to stay, prefixed with the figure's name so that
    # figures never clash on a page; an axis and a plotted line keep a class instead.
    referenced = set(re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"|aria-labelledby="([^"]+)"', svg))
    referenced = {name for names in referenced for name in names if name}

    def ids(match: re.Match) -> str:
        if match.group(1) in referenced:
            return f' id="{prefix}-{match.group(1)}"'
        kind = re.match(r"(matplotlib\.axis|line2d)_\d+$", match.group(1))
        return f' class="{_CLASSES[kind.group(1)]}"' if kind else ""

    svg = re.sub(r'\s\bid="([^"]+)"', ids, svg)
    svg = _without_bare_groups(svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    svg = re.sub(r'aria-labelledby="([^"]+)"', rf'aria-labelledby="{prefix}-\1"', svg)
    # Responsive: keep the viewBox, let CSS size it, no wider than drawn.
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    for _ in range(2):
        svg = re.sub(r'(<svg[^>]*?)\s(?:width|height)="[\d.]+pt"', r"\1", svg, count=1)
    if width:
        svg = re.sub(r"<svg\b", f'<svg style="max-width: {float(width.group(1)) * 4 / 3:.0f}px"', svg, count=1)
    return svg
