"""Text that cannot hold math, written as a reader reads it: ``√d_k`` becomes ``√dₖ``.

:func:`readable` writes a one-letter subscript with its Unicode letter (``d_k`` → ``dₖ``;
``W_Q``, ``d_model`` stay) in headings (after the table of contents has its anchors), the
navigation and the browser tab; ``figures.py`` in captions and text alternatives.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree

from markdown import Extension
from markdown.treeprocessors import Treeprocessor

from sitebuild import markdown_extension

_SUBSCRIPTS = dict(zip("aehijklmnoprstuvx", "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_NAME = re.compile(r"\b([A-Za-z])_([aehijklmnoprstuvx])\b")


def readable(text: str) -> str:
    """``text`` with each one-letter subscript such as ``d_k`` written ``dₖ``."""
    return _NAME.sub(lambda m: m.group(1) + _SUBSCRIPTS[m.group(2)], text)


class _ReadableHeadings(Treeprocessor):
    HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
    KEEP = {"code", "math", "script", "pre"}

    def run(self, root: etree.Element) -> None:
        for heading in (el for el in root.iter() if el.tag in self.HEADINGS):
            self._rewrite(heading)
        for token in _walk(getattr(self.md, "toc_tokens", []), lambda token: token.get("children", [])):
            token["name"] = readable(token["name"])
            token["html"] = readable(token.get("html", ""))

    def _rewrite(self, element: etree.Element) -> None:
        if element.text:
            element.text = readable(element.text)
        for child in element:
            if child.tag not in self.KEEP:
                self._rewrite(child)
            if child.tail:
                child.tail = readable(child.tail)


def _walk(items, children):
    for item in items:
        yield item
        yield from _walk(children(item), children)


class ReadableExtension(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        # After toc (5) has taken the anchors from the text as written, before MkDocs reads
        # the page title (1).
        md.treeprocessors.register(_ReadableHeadings(md), "sdpa_readable_headings", 4)


makeExtension, on_config = markdown_extension(ReadableExtension)  # Python-Markdown's entry point, and the hook


def on_page_content(html: str, page, config, files) -> str:
    """A page that Markdown did not make (the notebook): its headings and their contents."""
    if '<div class="jupyter-wrapper">' not in html:
        return html

    def heading(match: re.Match) -> str:
        parts = re.split(r"(<[^>]+>)", match[0])  # rewrite the text between tags only
        return "".join(part if part.startswith("<") else readable(part) for part in parts)

    for link in _walk(page.toc, lambda link: link.children):
        link.title = readable(link.title)
    return re.sub(r"<h([1-6])\b.*?</h\1>", heading, html, flags=re.S)
