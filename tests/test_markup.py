"""The build's fast paths over markup find what the plain ones found, and what it patches is there.

``markup.ids`` uses ``str.find`` where a regex would try every position of a page; the
glossary hands ``abbr`` one block per definition. Each gives what
the plain way gives. The one third-party function the build replaces (mkdocs-jupyter's
conversion, which the notebook page takes from the store) must still exist, taking what
the replacement passes on.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from pathlib import Path

import markdown
import pytest


def test_the_glossary_as_one_block_per_definition_gives_the_same_html():
    """The glossary's definitions reach ``abbr`` one block each (fast); joined into one
    block, as ``auto_append`` gives them, every page's HTML is the same."""
    from markdown.preprocessors import Preprocessor

    from sitebuild.glossary import GlossaryExtension

    class OneBlock(Preprocessor):  # after the glossary's preprocessor: the blank lines between definitions go
        def run(self, lines):
            def between(i):
                return 0 < i < len(lines) - 1 and lines[i - 1].startswith("*[") and lines[i + 1].startswith("*[")
            joined = [line for i, line in enumerate(lines) if line or not between(i)]
            assert len(joined) < len(lines) - 10
            return joined

    class Joined(GlossaryExtension):
        def extendMarkdown(self, md):  # noqa: N802
            super().extendMarkdown(md)
            md.preprocessors.register(OneBlock(md), "one_block", 30.5)

    glossary = (Path(__file__).resolve().parents[1] / "includes" / "glossary.md").read_text()
    text = ("# Logits and softmax\n\nThe logits of a softmax, at a temperature, and *saturation*.\n\n"
            "- a list of logits\n- entropy\n\n" + glossary)
    extensions = ["abbr", "attr_list", "def_list", "footnotes", "md_in_html", "tables", "toc", "admonition"]
    fast = markdown.markdown(text, extensions=[*extensions, GlossaryExtension()])
    slow = markdown.markdown(text, extensions=[*extensions, Joined()])
    assert "<abbr" in fast and "*[" not in fast
    assert fast == slow


@pytest.mark.parametrize("html", [
    '<p id="a">x</p><span data-id="b"></span><div xid="c" id="d"></div>', 'id="" id="e" _id="f" é id="g"',
    'xid="a id="b"', 'id="unclosed', '<svg id="fig-1"><path id="p1"/></svg>id="٣" ٣id="h"', ""])
def test_the_ids_of_a_page_are_the_regexs(html):
    """``markup.ids`` (str.find) finds what ``\\bid="([^"]+)"`` found, on odd input too."""
    import re

    from sitebuild.markup import ids

    assert ids(html) == re.findall(r'\bid="([^"]+)"', html)


def test_the_conversion_the_notebook_page_takes_from_the_store_is_there():
    from mkdocs_jupyter import convert

    found = inspect.unwrap(convert.nb2html)
    assert "nb_path" in inspect.signature(found).parameters, (
        f"mkdocs-jupyter {version('mkdocs-jupyter')}: convert.nb2html no longer takes nb_path, which "
        "sitebuild/notebook.py passes on")
