"""The search index: what Material's search leaves out (``data-search-exclude``: each
figure's drawing, each snippet's source behind its output) and what it keeps."""

from __future__ import annotations

import json
import re

from conftest import SNIPPETS, included_snippets


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
    page = (built_site / "derivation" / "index.html").read_text()
    drawings = [drawing for svg in re.findall(r"<svg\b.*?</svg>", page, re.S)
                if (drawing := re.sub(r"<[^>]+>", "", svg).strip())]  # the figures' (the theme's icons have no text)
    assert drawings and not [d for d in drawings if d[:60] in text]  # a figure's text alternative, its ticks
