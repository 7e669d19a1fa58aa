"""SVG found in a page and edited as a tree, written back as matplotlib writes it.

:func:`svg_spans` finds each inline ``<svg>`` of a page (``figures.py`` themes them) and
:func:`replace_spans` puts new text in their places. :func:`parse` reads an SVG into
:class:`xml.etree.ElementTree.Element` trees and :func:`write` writes it back, giving the
bytes it read where nothing was edited: names stay as written (expat reads without
namespace processing, so ``xmlns`` and ``xlink:href`` are plain attributes, in place);
attributes keep their order and quoting; a newline inside an attribute value stays one (it
is handed to expat as ``&#10;``, which attribute-value normalisation leaves alone); comments
stay (matplotlib writes a tick label's TeX in one); every empty element is ``<tag/>``, as
matplotlib writes it (ElementTree's own writer gives ``<tag />``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from xml.parsers import expat

Element = ElementTree.Element


def parse(markup: str) -> Element:
    """The element that ``markup`` (one element, no XML declaration) writes."""
    builder = ElementTree.TreeBuilder(insert_comments=True)
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.CommentHandler = lambda text: builder.comment(text.replace("&#10;", "\n"))  # as written
    parser.Parse(markup.replace("\n", "&#10;"), True)
    return builder.close()


def write(element: Element) -> str:
    """``element`` (without its tail) as markup, as matplotlib writes it."""
    parts: list[str] = []
    _write(element, parts.append)
    return "".join(parts)


def _write(element: Element, out: Callable[[str], None]) -> None:
    tag = element.tag
    if tag is ElementTree.Comment:
        out(f"<!--{element.text}-->")
        return
    out(f"<{tag}")
    for name, value in element.attrib.items():
        out(f' {name}="{_attribute(value)}"')
    if element.text or len(element):
        out(">")
        if element.text:
            out(_text(element.text))
        for child in element:
            _write(child, out)
            if child.tail:
                out(_text(child.tail))
        out(f"</{tag}>")
    else:
        out("/>")


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute(value: str) -> str:
    return _text(value).replace('"', "&quot;")


def unwrap(element: Element, bare: Callable[[Element], bool]) -> None:
    """Replace every element below ``element`` for which ``bare`` holds by its content, in one
    pass; a newline that opens its text or its tail (after its tags) goes with it."""
    kept: list[Element] = []
    changed = False
    for child in element:
        if len(child):
            unwrap(child, bare)
        if not bare(child):
            kept.append(child)
            continue
        changed = True
        append_text(element, kept, (child.text or "").removeprefix("\n"))
        kept.extend(child)
        append_text(element, kept, (child.tail or "").removeprefix("\n"))
    if changed:
        element[:] = kept


def remove(parent: Element, child: Element) -> None:
    """Take ``child`` and the whitespace that follows it out of ``parent``."""
    index = list(parent).index(child)
    kept = parent[:index]
    append_text(parent, kept, (child.tail or "").lstrip())
    del parent[index]


def append_text(parent: Element, children: list[Element], text: str) -> None:
    """Add ``text`` after the last of ``children`` (the first of ``parent``'s), or to
    ``parent``'s own text if there is none."""
    if not text:
        return
    if children:
        children[-1].tail = (children[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def svg_spans(html: str) -> list[tuple[int, int]]:
    """(start, end) of each ``<svg>`` element of ``html``, in order (an SVG never nests one:
    matplotlib writes none inside another)."""
    spans = []
    start = html.find("<svg")
    while start >= 0:
        end = html.find("</svg>", start)
        if end < 0:
            break
        spans.append((start, end + len("</svg>")))
        start = html.find("<svg", end)
    return spans


def replace_spans(html: str, spans, replacement: Callable[..., str]) -> str:
    """``html`` with each span ``(start, end, ...)`` (in order, apart) replaced by
    ``replacement(*span)``."""
    pieces, position = [], 0
    for span in spans:
        pieces += [html[position:span[0]], replacement(*span)]
        position = span[1]
    return "".join(pieces) + html[position:] if pieces else html


def ids(html: str) -> list[str]:
    """Every ``id="…"`` value in ``html``, in order: what ``re.findall(r'\\bid="([^"]+)"', html)``
    returns, found with ``str.find`` (the regex, which opens with ``\\b``, tries every
    position of a page's hundreds of kilobytes; this looks only where ``id="`` stands)."""
    found: list[str] = []
    find, position = html.find, 0
    while (start := find('id="', position)) >= 0:
        before = html[start - 1] if start else " "
        end = find('"', start + 4)
        if end < 0:  # no closing quote after it, so no later match either
            break
        if before.isalnum() or before == "_" or end == start + 4:  # no \b before it, or an empty value
            position = start + 1
            continue
        found.append(html[start + 4:end])
        position = end + 1
    return found
