"""The search index: what it leaves out (``sitebuild/search.py``) and what it keeps."""

from __future__ import annotations

import json
from types import SimpleNamespace

from conftest import SNIPPETS, included_snippets
from sitebuild import search

PAGE = (
    '<p>Text.</p>\n<figure class="sdpa-figure" id="fig-x">\n<svg role="img"><title>alt</title>'
    '<path d="M 0 0"/><text>10</text></svg>\n<figcaption>Caption.</figcaption></figure>\n'
    '<div class="tabbed-set"><div class="tabbed-content">\n<div class="tabbed-block">\n<p>Output</p>\n</div>\n'
    + search.SOURCE_TAB + 'snippets/x.py</span><pre><span></span><code>print(1)\n</code></pre></div>\n</div>\n'
    '</div></div>\n<div class="highlight"><pre><code>library = "kept"</code></pre></div>\n'
    '<div class="highlight"><table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>'
    '<span class="normal">1</span></pre></div></td><td class="code"><div><pre><span></span><code>'
    '<span class="k">def</span> <span class="nf">run</span>():</code></pre></div></td></tr></table></div>\n'
)


def test_drawings_snippet_sources_and_highlighting_stand_aside_and_come_back():
    page = SimpleNamespace(file=SimpleNamespace(src_uri="x.md"))
    indexed = search.on_page_content(PAGE, page, None, None)
    assert "<path" not in indexed and "print(1)" not in indexed
    assert all(kept in indexed for kept in ("Caption.", "Output", "snippets/x.py", 'library = "kept"'))
    assert "<code>def run():</code>" in indexed and 'class="normal"' not in indexed  # a Code page's source: its text
    assert search.on_post_page(indexed, page, None) == PAGE
    assert search.on_page_content("<p>plain</p>", page, None, None) == "<p>plain</p>"


def _docstring_line(snippet: str) -> str:
    text = (SNIPPETS / snippet).read_text()
    return text.split('"""', 2)[1].strip().splitlines()[0]


def test_the_index_has_no_snippet_source_but_their_names_and_the_librarys_code(built_site):
    entries = json.loads((built_site / "search" / "search_index.json").read_text())["docs"]
    text = "\n".join(entry["text"] for entry in entries)
    snippets = included_snippets()
    assert [s for s in snippets if f"snippets/{s}" not in text] == []
    # a snippet's docstring is shown in its Source tab only
    assert [s for s in snippets if _docstring_line(s).replace("&", "&amp;") in text] == []
    assert "def run_recalls" in text  # the Code pages' source stays searchable
    assert "<svg" not in text


def test_the_search_step_finds_the_line_numbers_pymdownx_writes():
    """A Code page's block is highlighted with line numbers (pymdownx.highlight, Pygments):
    the search step finds its numbers and its code by the cells they write."""
    import markdown
    from importlib.metadata import version

    html = markdown.markdown('```python linenums="1"\nx = 1\n```\n', extensions=["pymdownx.highlight",
                                                                               "pymdownx.superfences"])
    assert search.LINE_NUMBERS in html and search.CODE in html, (
        f"pymdownx {version('pymdown-extensions')}, Pygments {version('Pygments')}: the numbered block is no longer "
        f"the table sitebuild/search.py expects:\n{html}")
