"""Plain sentences: the core path's pages read at about twenty words a sentence.

Measured on the built pages (what a reader reads, the sentences snippets print included):
each page's article, less its code, tables, math, figures and navigation, cut into
sentences at a full stop, question or exclamation mark before a capital, and at the end of
every block (paragraph, list item, heading, table cell, box title). On each core page the
median sentence has at most 20 words and at most 5% of the sentences have more than 40; every
page, core or evidence, holds at most 3,000 words of prose.

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

#: Elements whose text is not prose.
SKIP = {"pre", "code", "table", "math", "svg", "figure", "script", "style", "nav", "button"}
#: Of those, the ones that read as one word inside a sentence.
WORDS = {"math", "code"}
#: Elements that end a sentence where they end.
BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "dt", "dd", "td", "th",
          "blockquote", "div", "figcaption", "details"}
WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")


class _Prose(html.parser.HTMLParser):
    """The text of a page's ``<article>``, blocks separated by a blank line."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.article = 0
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.article += 1
        elif self.article and tag in SKIP:
            if tag in WORDS and not self.skip:
                self.parts.append(" X ")  # inline math or code reads as one word
            self.skip += 1
        elif self.article and tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag == "article":
            self.article -= 1
        elif self.article and tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif self.article and tag in BLOCKS:
            self.parts.append("\n\n")

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_data(self, data):
        if self.article and not self.skip:
            self.parts.append(data)


def sentences(page_html: str) -> list[int]:
    """The word count of every sentence of a built page's prose (three words or more)."""
    parser = _Prose()
    parser.feed(page_html)
    text = "".join(parser.parts)
    text = re.sub(r"\b(et al|e\.g|i\.e|vs|cf)\.", r"\1", text)
    counts = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", block):
            n = len(WORD.findall(sentence))
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


def test_the_measure_splits_sentences_and_drops_what_is_not_prose():
    page = ("<nav><p>Skip this nav text entirely please.</p></nav><article><h1>A title of words</h1>"
            "<p>One two three four. Five six seven (eight nine) ten.</p>"
            "<ul><li>An item without a stop</li><li>Another item of words</li></ul>"
            "<pre><code>x = 1. Not prose at all here.</code></pre>"
            "<table><tr><td>a cell of table text</td></tr></table>"
            "<p>Inline <math><mi>x</mi></math> counts as one word.</p></article>")
    assert sentences(page) == [4, 4, 6, 5, 4, 6]


if __name__ == "__main__":
    site = Path(sys.argv[1])
    names = sys.argv[2:] or sorted(CORE)
    for name in names:
        folder = CORE.get(name, name)
        counts = sentences(page_html(site, folder))
        median, long = figures(counts)
        over = median > MEDIAN or long > LONG_SHARE or sum(counts) > WORDS_PER_PAGE
        mark = "   <- over" if over else ""
        print(f"{name:16s} {len(counts):4d} sentences  median {median:4.1f}  over {LONG}: {long:5.1%}  "
              f"words {sum(counts):5d}{mark}")
