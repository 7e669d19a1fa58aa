"""Valid HTML from the tools that write the pages (the Nu HTML checker finds no error).

A MkDocs hook that fixes what the checker rejects where it is made: a snippet's raw HTML
block indented under its "Result" tab, which Python-Markdown wrapped in ``<p>``
(:class:`HtmlBlocks`, a Markdown extension, stores it whole); mkdocs-jupyter's inlined
JupyterLab stylesheet and copy buttons (dropped; code cells become the theme's code
blocks); Material's ``autocomplete="off"`` on checkbox toggles (``docs/assets/site.js``
unchecks them instead), empty ``tabindex`` and a label's ``for`` naming no element.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree

from markdown import Extension
from markdown.blockprocessors import BlockProcessor

from sitebuild import markdown_extension
from sitebuild.markup import ids as _ids


#: A block that opens with one block-level element and closes it on its last line.
_HTML_BLOCK = re.compile(r"\A<(?P<tag>[a-z][a-z0-9]*)\b[^>]*>.*</(?P=tag)>\s*\Z", re.S)


class _HtmlBlockProcessor(BlockProcessor):
    """Store a raw block-level HTML element found inside a container as one HTML block."""

    def test(self, parent: etree.Element, block: str) -> bool:
        match = _HTML_BLOCK.match(block)
        return bool(match) and self.parser.md.is_block_level(match.group("tag"))

    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        block = blocks.pop(0)
        # A paragraph holding only the placeholder: Python-Markdown's raw-HTML post-processor
        # puts the block-level HTML back in its place, without the paragraph.
        etree.SubElement(parent, "p").text = self.parser.md.htmlStash.store(block.strip())


class HtmlBlocks(Extension):
    """Raw block-level HTML in indented containers (tabs, admonitions) stays a block."""

    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        # After indented code (80) and tables (75), before paragraphs (10).
        md.parser.blockprocessors.register(_HtmlBlockProcessor(md.parser), "sdpa_html_block", 72)


makeExtension, on_config = markdown_extension(HtmlBlocks)  # Python-Markdown's entry point, and the hook


# ---- the notebook page ------------------------------------------------------------------

_NOTEBOOK = '<div class="jupyter-wrapper">'
_NOTEBOOK_CHROME = re.compile(
    r"<style\b[^>]*>.*?</style>\s*"  # JupyterLab's stylesheet
    r'|<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>\s*'  # its copy button
    r'|<div class="clipboard-copy-txt" id="[^"]*">.*?</div>\s*'  # the text that button copies
    r"|<script>(?:(?!</script>).)*?clipboard(?:(?!</script>).)*</script>\s*",  # its script
    re.S,
)
_NOTEBOOK_CODE = re.compile(r'<div class="highlight-ipynb hl-\w+\s*"><pre><span></span>(.*?)</pre></div>', re.S)


def on_page_content(content: str, page, config, files) -> str:
    if _NOTEBOOK not in content:
        return content
    content = _NOTEBOOK_CHROME.sub("", content)
    return _NOTEBOOK_CODE.sub(r'<div class="highlight"><pre><span></span><code>\1</code></pre></div>', content)


_CHECKBOX_AUTOCOMPLETE = re.compile(r'(<input\b[^>]*\btype="checkbox"[^>]*?)\s+autocomplete="off"')


def on_post_page(output: str, **_) -> str:
    """Material's toggles, on every page and every page made from a template alone (404.html)."""
    output = _CHECKBOX_AUTOCOMPLETE.sub(r"\1", output).replace(' tabindex=""', "")
    ids = set(_ids(output))
    return re.sub(r'(<label\b[^>]*?) for="([^"]+)"', lambda m: m[0] if m[2] in ids else m[1], output)


on_post_template = on_post_page
