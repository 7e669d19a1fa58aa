"""What the search index leaves out: each figure's drawing and each snippet's source.

A MkDocs hook, after those that make a page's HTML. A figure's drawing (most of the search
plugin's parsing) and a snippet's source (three fifths of the index, which every page load
indexes again) stand aside while Material's search plugin reads the page (between
``on_page_content`` and ``on_post_page``), a comment in their place, and come back when the
page is written, byte for byte. The library's source stays searchable on the Code pages, as
plain text (its line numbers and token ``<span>`` tags stand aside).
"""

from __future__ import annotations

import re

from sitebuild import markup

#: Where a snippet's source starts: the tab markdown-exec writes behind the output
#: (``source="tabbed-right"``), holding the fence's title (the file) and the highlighted code.
SOURCE_TAB = '<div class="tabbed-block">\n<div class="highlight"><span class="filename">'
#: A highlighted block with line numbers (the Code pages): the numbers, then the code.
LINE_NUMBERS, CODE = '<td class="linenos">', '<td class="code">'
TAG = re.compile(r"<[^>]*>")
PLACE = re.compile(r"<!-- sdpa-aside (\d+) -->(.*?)<!-- sdpa-aside -->", re.S)

#: Each page's parts set aside, by source path, from on_page_content to on_post_page.
_ASIDE: dict[str, list[str]] = {}


def _between(html: str, opening: str, start: str, end: str) -> list[tuple[int, int]]:
    """(start, end) of each ``start`` … ``end`` that follows an ``opening``."""
    spans = []
    at = html.find(opening)
    while at >= 0:
        first = html.find(start, at)
        last = html.find(end, first)
        if first < 0 or last < 0:
            break
        spans.append((first, last + len(end)))
        at = html.find(opening, last)
    return spans


def _spans(html: str) -> list[tuple[int, int, str]]:
    """(start, end, stand-in) of each drawing, snippet's source and line numbers (left out),
    and of the highlighted code of a Code page (its text kept), in order."""
    spans = [(start, end, "") for start, end in markup.svg_spans(html)]
    spans += [(start, end, "") for start, end in _between(html, SOURCE_TAB, "<pre>", "</pre>")]
    spans += [(start, end, "") for start, end in _between(html, LINE_NUMBERS, "<pre>", "</pre>")]
    spans += [(start, end, "<code>" + TAG.sub("", html[start:end]) + "</code>")
              for start, end in _between(html, CODE, "<code>", "</code>")]
    return sorted(spans)


def on_page_content(html: str, page, config, files) -> str:
    spans = _spans(html)
    if not spans:
        return html
    parts = _ASIDE[page.file.src_uri] = []
    pieces, position = [], 0
    for start, end, stand_in in spans:
        pieces += [html[position:start], f"<!-- sdpa-aside {len(parts)} -->{stand_in}<!-- sdpa-aside -->"]
        parts.append(html[start:end])
        position = end
    return "".join(pieces) + html[position:]


def on_post_page(output: str, page, config) -> str:
    """Put the page's parts back in their places."""
    parts = _ASIDE.pop(page.file.src_uri, [])
    return PLACE.sub(lambda place: parts[int(place[1])], output) if parts else output
