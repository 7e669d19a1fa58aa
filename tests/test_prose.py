"""Plain sentences: the core path's pages read at about twenty words a sentence.

Measured on the built pages (what a reader reads, the sentences snippets print included):
each page's article, less its code, tables, math, figures and navigation, cut into
sentences at a full stop, question or exclamation mark before a capital, and at the end of
every block (paragraph, list item, heading, table cell, box title). On each core page the
median sentence has at most 20 words and at most 5% of the sentences have more than 40; every
page, core or evidence, holds at most 3,000 words of prose. The core path, read without
opening a collapsed box (``<details>`` without ``open``: setup, scope, proofs, sources), its
figures' captions counted, holds at most 9,000 words in all: an hour's reading (issue 46).

Run it on a site you built: ``python tests/test_prose.py SITE [page ...]`` prints the
figures of every page (``home``, ``derivation``, ...).
"""

from __future__ import annotations

import html.parser
import re
import statistics
import sys
from pathlib import Path

import pytest

#: The core path (the reader issue): home, derivation, failure modes, temperature, QK-norm,
#: practice, interview, by their folder in the built site ("" is the home page).
CORE = {"home": "", "derivation": "derivation", "failure-modes": "failure-modes",
        "temperature": "temperature", "qk-norm": "qk-norm", "practice": "practice",
        "interview": "interview"}
MEDIAN, LONG, LONG_SHARE = 20, 40, 0.05
#: The evidence pages (their own section of the navigation) keep their detail; every page, core
#: or evidence, holds at most WORDS_PER_PAGE words of prose.
EVIDENCE = {name: name for name in ("tuning", "transfer", "language-model", "limits", "row-designs", "field")}
WORDS_PER_PAGE = 3000
#: The core path's visible prose, all seven pages together.
CORE_VISIBLE_WORDS = 9000

#: Elements whose text is not prose.
SKIP = {"pre", "code", "table", "math", "svg", "figure", "script", "style", "nav", "button"}
#: Of those, the ones that read as one word inside a sentence.
WORDS = {"math", "code"}
#: Elements that end a sentence where they end.
BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "dt", "dd", "td", "th",
          "blockquote", "div", "figcaption", "details"}
WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")


#: What the visible measure (the reader's: ``sentences.py --visible`` of the shared tools, whose
#: counting it follows: code left out, texts of elements joined by spaces, words between spaces)
#: also leaves out: headings, box titles, tab labels, the library-use and download lines, and
#: every collapsed box (``<details>`` without ``open``). It reads figures' captions.
HIDDEN_CLASSES = {"admonition-title", "tabbed-labels", "sdpa-uses", "sdpa-downloads", "headerlink"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Prose(html.parser.HTMLParser):
    """The text of a page's ``<article>``, blocks separated by a blank line."""

    def __init__(self, visible: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.article = 0
        self.skip = 0
        self.visible = visible
        self.open: list[tuple[str, bool]] = []  # (tag, hidden) of the open elements (visible)

    def handle_starttag(self, tag, attrs):
        if self.visible and self.article and tag not in VOID:
            attrs = dict(attrs)
            hidden = (tag in HEADINGS or (tag == "details" and "open" not in attrs)
                      or bool(HIDDEN_CLASSES & set((attrs.get("class") or "").split())))
            self.open.append((tag, hidden))
            self.skip += hidden
        if tag == "article":
            self.article += 1
        elif self.article and tag in SKIP and not (self.visible and tag == "figure"):
            if tag in WORDS and not self.skip and not (self.visible and tag == "code"):
                self.parts.append(" X ")  # inline math (and, but for the reader's measure, code): a word
            self.skip += 1
        elif self.article and tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if self.visible and any(name == tag for name, _ in self.open):
            while self.open:
                name, hidden = self.open.pop()
                self.skip -= hidden
                if name == tag:
                    break
        if tag == "article":
            self.article -= 1
        elif self.article and tag in SKIP and not (self.visible and tag == "figure"):
            self.skip = max(0, self.skip - 1)
        elif self.article and tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_data(self, data):
        if self.article and not self.skip:
            # the reader's measure joins the texts of elements with spaces, as sentences.py does
            self.parts.append(f" {data} " if self.visible else data)


def sentences(page_html: str, visible: bool = False) -> list[int]:
    """The word count of every sentence of a built page's prose (three words or more);
    ``visible``: what a reader sees without opening a collapsed box, figures' captions included."""
    parser = _Prose(visible)
    parser.feed(page_html)
    text = "".join(parser.parts)
    text = re.sub(r"\b(et al|e\.g|i\.e|vs|cf)\.", r"\1", text)
    counts = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", block):
            # the reader's measure counts every token between spaces, as sentences.py does
            n = len(sentence.split()) if visible else len(WORD.findall(sentence))
            if n >= 3:
                counts.append(n)
    return counts


def figures(counts: list[int]) -> tuple[float, float]:
    """The median sentence's words, and the share of sentences over 40 words."""
    return statistics.median(counts), sum(n > LONG for n in counts) / len(counts)


def page_html(site: Path, folder: str) -> str:
    return (site / folder / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CORE))
def test_core_pages_read_at_about_twenty_words_a_sentence(built_site, name):
    counts = sentences(page_html(built_site, CORE[name]))
    median, long = figures(counts)
    assert median <= MEDIAN and long <= LONG_SHARE, (
        f"{name}: median sentence {median:g} words (at most {MEDIAN}), {long:.1%} over {LONG} words "
        f"(at most {LONG_SHARE:.0%}), {len(counts)} sentences")


@pytest.mark.parametrize("name", sorted(CORE | EVIDENCE))
def test_a_page_holds_at_most_three_thousand_words_of_prose(built_site, name):
    words = sum(sentences(page_html(built_site, {**CORE, **EVIDENCE}[name])))
    assert words <= WORDS_PER_PAGE, f"{name}: {words} words of prose (at most {WORDS_PER_PAGE})"


def test_the_core_path_is_an_hours_reading(built_site):
    words = {name: sum(sentences(page_html(built_site, folder), visible=True)) for name, folder in CORE.items()}
    assert sum(words.values()) <= CORE_VISIBLE_WORDS, (
        f"the core path shows {sum(words.values())} words (at most {CORE_VISIBLE_WORDS}): {words}")


def test_the_measure_splits_sentences_and_drops_what_is_not_prose():
    page = ("<nav><p>Skip this nav text entirely please.</p></nav><article><h1>A title of words</h1>"
            "<p>One two three four. Five six seven (eight nine) ten.</p>"
            "<ul><li>An item without a stop</li><li>Another item of words</li></ul>"
            "<pre><code>x = 1. Not prose at all here.</code></pre>"
            "<table><tr><td>a cell of table text</td></tr></table>"
            "<p>Inline <math><mi>x</mi></math> counts as one word.</p></article>")
    assert sentences(page) == [4, 4, 6, 5, 4, 6]
    boxed = ("<article><h2>A heading of words</h2><p>Four words are shown.</p><details><summary>Setup"
             "</summary><p>Five words are not shown.</p></details><details open><p>Open boxes are "
             "shown.</p></details><figure><svg><text>no words here at all</text></svg><figcaption>A "
             "caption is read.<span class=\"sdpa-downloads\">Download: figure (SVG)</span></figcaption>"
             "</figure><p class=\"sdpa-uses\">Library code used: these words</p></article>")
    assert sentences(boxed) == [4, 4, 5, 4, 5]
    assert sentences(boxed, visible=True) == [4, 4, 4]


if __name__ == "__main__":
    site = Path(sys.argv[1])
    names = sys.argv[2:] or sorted(CORE)
    for name in names:
        folder = CORE.get(name, name)
        counts = sentences(page_html(site, folder))
        median, long = figures(counts)
        over = median > MEDIAN or long > LONG_SHARE or sum(counts) > WORDS_PER_PAGE
        mark = "   <- over" if over else ""
        shown = sum(sentences(page_html(site, folder), visible=True))
        print(f"{name:16s} {len(counts):4d} sentences  median {median:4.1f}  over {LONG}: {long:5.1%}  "
              f"words {sum(counts):5d}, shown {shown:5d}{mark}")
