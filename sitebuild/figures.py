"""Figures on the built pages: themed inline SVG, and each figure's SVG and CSV to download.

A Markdown extension (for any engine) and a MkDocs hook. For each ``sdpa.Figure`` a snippet
printed (matplotlib's SVG, the caption, the plotted numbers as CSV in a ``<script
type="text/csv">``), :class:`FiguresExtension` writes ``d_k`` as ``dₖ`` in the caption and
text alternative, links ``figures/<name>.svg`` and ``.csv`` from the caption, and makes the
SVG follow the page: the ink ``currentColor``, each palette colour ``var(--sdpa-cN, colour)``
(``docs/assets/site.css``), ids prefixed with the figure's name, coordinates to 0.1 pt,
sized by CSS, left out of the search index (``data-search-exclude``, as is each snippet's
Source tab). The hook writes those files beside the page, and does the same for a page
Markdown did not make (the notebook). Each SVG is edited as a tree (``markup.py``), read
once, written twice.
"""

import functools
import importlib
import re
from pathlib import Path

from markdown import Extension
from markdown.postprocessors import Postprocessor

from sdpa.style import DATA_CLASS, EXPLORABLE_CLASS, FIGURE_CLASS, FIGURE_ID_PREFIX
from sitebuild import markdown_extension, markup
from sitebuild.markdown_exec_adapter import SOURCE_CODE
from sitebuild.readable import readable

_OPEN = f'<figure class="{FIGURE_CLASS}"'
FIGURE = re.compile(
    rf'{re.escape(_OPEN)} id="{re.escape(FIGURE_ID_PREFIX)}(?P<name>[a-z0-9-]+)">(?P<body>.*?)</figure>', re.S)
# Attributes in any order: the notebook page's HTML passes through an HTML parser that sorts them.
DATA = re.compile(rf'\s*<script\b[^>]*\bclass="{re.escape(DATA_CLASS)}"[^>]*>\n(?P<csv>.*?)</script>', re.S)
EXPLORABLE_CAPTION = re.compile(
    rf'(<figure class="{re.escape(EXPLORABLE_CLASS)}"[^>]*>.*?)(<figcaption>.*?</figcaption>)', re.S)
FOLDER = "figures"


def themed_figures(html: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``html`` with its figures themed and its Source tabs left out of search, and each
    figure's downloads (name, SVG, CSV)."""
    html = EXPLORABLE_CAPTION.sub(lambda m: m[1] + _outside_code(m[2], readable), html)
    html = SOURCE_CODE.sub(r"\1<pre data-search-exclude>", html)
    if _OPEN not in html:
        return html, []
    colours, downloads = _colours(), []

    def figure(match: re.Match) -> str:
        made = _made(match["name"], match["body"], colours)
        if made is None:
            return match[0]  # not made by sdpa.Figure (or made already): leave it as it is
        downloads.append((match["name"], *made[1:]))
        return made[0]

    return FIGURE.sub(figure, html), downloads


#: The downloads of the page being converted (its snippets' outputs are converted on their
#: own first), by name, from the extension to the hook.
_PENDING: dict[str, tuple[str, str]] = {}


class _Figures(Postprocessor):
    def run(self, text: str) -> str:
        text, downloads = themed_figures(text)
        _PENDING.update((name, files) for name, *files in downloads)
        return text


class FiguresExtension(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        md.postprocessors.register(_Figures(md), "sdpa_figures", 4)  # after raw HTML (30) and math (5)


makeExtension, on_config = markdown_extension(FiguresExtension)  # Python-Markdown's entry point, and the hook


def on_page_content(html: str, page, config, files) -> str:
    html, downloads = themed_figures(html)  # a page Markdown did not make (the notebook)
    folder = Path(config.site_dir) / page.url / FOLDER
    for name, svg, csv in [(name, *files) for name, files in _PENDING.items()] + downloads:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.svg").write_text(svg, encoding="utf-8")
        (folder / f"{name}.csv").write_text(csv, encoding="utf-8")
    _PENDING.clear()
    return html


def _colours() -> tuple[str, tuple[str, ...]]:
    """The ink and the palette, as ``sdpa.style`` says now (read anew: ``mkdocs serve``
    sees an edit of its colours, which the workers draw with)."""
    style = importlib.reload(importlib.import_module("sdpa.style"))
    return style.INK, tuple(style.PALETTE)


def _made(name: str, body: str, colours: tuple) -> tuple[str, str, str] | None:
    """The figure ``name`` as the page shows it, its SVG download and its CSV; None when
    ``body`` was not made by ``sdpa.Figure``."""
    data = DATA.search(body)
    spans = markup.svg_spans(body)
    if data is None or not spans:
        return None
    drawings = [markup.parse(body[start:end]) for start, end in spans]
    for drawing in drawings:
        for title in drawing.iter("title"):
            title.text = readable(title.text or "")
        _compact(drawing)
    download = f'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n{markup.write(drawings[0])}\n'
    body = re.sub(r"<figcaption>.*?</figcaption>", lambda m: _outside_code(m[0], readable), DATA.sub("", body),
                  flags=re.S)
    links = (f' <span class="sdpa-downloads">Download: <a href="{FOLDER}/{name}.svg" download>'
             f'figure (SVG)</a> · <a href="{FOLDER}/{name}.csv" download>data (CSV)</a></span>')
    body = body.replace("</figcaption>", links + "</figcaption>", 1)
    # The first SVG is the wide layout, a second one the stacked copy for phones.
    inline = iter(_themed(drawing, f"{name}-narrow" if i else name, colours) for i, drawing in enumerate(drawings))
    body = markup.replace_spans(body, markup.svg_spans(body), lambda start, end: next(inline))
    return f'{_OPEN} id="{FIGURE_ID_PREFIX}{name}">{body}</figure>', download, data.group("csv")


def _outside_code(html: str, change) -> str:
    parts = re.split(r"(<code>.*?</code>)", html, flags=re.S)
    return "".join(part if part.startswith("<code>") else change(part) for part in parts)


_DIGITS = re.compile(r"(?<=\d\.\d)\d+")  # the digits after a number's first decimal
_PATH_BREAK = re.compile(r" ?\n(?=[MLCQZz] |z)")


def _compact(svg: markup.Element) -> None:
    """Coordinates to 0.1 pt in attribute values (not in a style: its opacities would
    change), and each path on one line."""
    for element in svg.iter():
        for name, value in element.attrib.items():  # values replaced in place: the dict keeps its size
            short = _DIGITS.sub("", value) if "." in value and name != "style" else value
            element.attrib[name] = _PATH_BREAK.sub(" ", short) if "\n" in short else short


_COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")
_FONT = re.compile(r"font-family: [^;]*;? ?")
_INK_FILL = re.compile(r";? ?fill: currentColor")
_INDENT = re.compile(r"\n[ \t]+")
_URL = re.compile(r"url\(#([^)]+)\)")
_NO_ROTATION = re.compile(r"rotate\(-?0 [\d.]+ [\d.]+\)")
_KIND = re.compile(r"(matplotlib\.axis|line2d)_\d+")
_CLASSES = {"matplotlib.axis": "mpl-axis", "line2d": "mpl-line"}
_SIZE = re.compile(r"[\d.]+pt")


@functools.lru_cache(maxsize=4096)  # a figure repeats a few styles thousands of times
def _style(style: str, text: bool, colours: tuple) -> str:
    """A style attribute in the page's colours; a text's leaves its font, and its colour unless
    it has one of its own, to site.css."""
    ink, palette = colours
    shades = {colour.lower(): i for i, colour in enumerate(palette)}

    def shade(colour: re.Match) -> str:
        i = shades.get(colour.group(0).lower())
        return colour.group(0) if i is None else f"var(--sdpa-c{i}, {colour.group(0)})"

    style = _COLOUR.sub(shade, style.replace(ink, "currentColor"))
    return _INK_FILL.sub("", _FONT.sub("", style, count=1), count=1) if text else style


def _themed(svg: markup.Element, prefix: str, colours: tuple) -> str:
    """``svg`` made to follow the page in ``colours`` (ink, palette), written out (the tree
    is changed)."""
    ink = colours[0]
    for parent in [element for element in svg.iter() if element.find("style") is not None]:
        for style in parent.findall("style"):
            markup.remove(parent, style)  # site.css has it
    referenced: set[str] = set()
    named: list[markup.Element] = []
    for element in svg.iter():
        if element.text and "\n" in element.text:  # lighter: no indentation
            element.text = _INDENT.sub("\n", element.text)
        if element.tail and "\n" in element.tail:
            element.tail = _INDENT.sub("\n", element.tail)
        attrib = element.attrib
        for name, value in attrib.items():  # values replaced in place: the dict keeps its size
            if name == "style":
                new = _style(value, element.tag == "text", colours)
            else:
                new = value.replace(ink, "currentColor") if ink in value else value
            # References, prefixed with the figure's name so that figures never clash on a page.
            if "url(#" in new:
                referenced.update(_URL.findall(new))
                new = new.replace("url(#", f"url(#{prefix}-")
            elif (name == "href" or name.endswith(":href")) and new.startswith("#"):
                referenced.add(new[1:])
                new = f"#{prefix}-{new[1:]}"
            elif name == "aria-labelledby":
                referenced.update(new.split())
                new = " ".join(f"{prefix}-{target}" for target in new.split())
            attrib[name] = new
        if "transform" in attrib and _NO_ROTATION.fullmatch(attrib["transform"]):
            del attrib["transform"]
        if "id" in attrib:
            named.append(element)
    # Ids: only those something refers to stay, prefixed; an axis or a plotted line gets a class.
    for element in named:
        name = element.get("id")
        if name in referenced:
            element.set("id", f"{prefix}-{name}")
            continue
        kind = _KIND.fullmatch(name)
        element.attrib = {("class" if key == "id" else key): (_CLASSES[kind[1]] if key == "id" else value)
                          for key, value in element.attrib.items() if kind or key != "id"}
    # A <g> with no attribute left (matplotlib's wrapper of each artist) draws nothing: half
    # a figure's elements were such groups, each one more node for the browser to lay out.
    markup.unwrap(svg, lambda element: element.tag == "g" and not element.attrib)
    # Responsive: keep the viewBox, let CSS size it, no wider than drawn.
    width = svg.get("width", "")
    attrib = {key: value for key, value in svg.attrib.items()
              if key not in ("width", "height") or not _SIZE.fullmatch(value)}
    if _SIZE.fullmatch(width):
        attrib = {"style": f"max-width: {float(width[:-2]) * 4 / 3:.0f}px", **attrib}
    svg.attrib = {**attrib, "data-search-exclude": ""}  # Material's search skips the drawing
    return markup.write(svg)
