"""Pages a reader finishes: no page over 3,000 words of prose, and every topic page opens
with its answer in at most three sentences (read from the Markdown sources: no build)."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import DOCS, REPO

#: The pages of the site's story, in the navigation (not the reference pages).
REFERENCE = {"references.md", "glossary.md", "build-report.md", "lab.py", "code/index.md"}


def nav_pages() -> list[str]:
    """The nav's pages in order, the pages of its sections (the evidence pages) included."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python", "#"))

    def pages(entries):
        for entry in entries:
            value = next(iter(entry.values()))
            yield from pages(value) if isinstance(value, list) else [value]

    return list(pages(config["nav"]))


TOPIC_PAGES = [page for page in nav_pages() if page not in REFERENCE and not page.startswith("code/")]


def prose(markdown: str) -> str:
    """The page's running text: no front matter, code, included snippets, tables, display
    math or HTML; inline math counts as one word."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    lines = [line for line in text.splitlines()
             if not line.lstrip().startswith(("|", "--8<--", "<"))]
    return re.sub(r"\$[^$\n]*\$", " X ", "\n".join(lines))


def words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9][\w'’.-]*", text))


def opening(markdown: str) -> str:
    """The text of the page's first admonition (its answer), its markers and links' targets
    stripped."""
    match = re.search(r'^!!! \w+ "[^"]*"\n((?:    .*\n|\n)+)', markdown, flags=re.M)
    assert match, "the page opens with no answer box"
    text = re.sub(r"\]\([^)]*\)", "]", match.group(1))
    text = re.sub(r"--8<--.*", "", text)
    return re.sub(r"\$[^$]*\$", "X", text)


def sentences(text: str) -> int:
    text = re.sub(r"\b(et al|e\.g|i\.e|vs|cf)\.", r"\1", text)
    return len(re.findall(r"[.!?](?=\s|$)", text.strip()))


@pytest.mark.parametrize("source_page", TOPIC_PAGES)
def test_no_page_has_more_than_3000_words_of_prose(source_page):
    count = words(prose((DOCS / source_page).read_text()))
    assert count <= 3000, f"{source_page}: {count} words of prose"


@pytest.mark.parametrize("source_page", [page for page in TOPIC_PAGES if page != "index.md"])
def test_every_page_opens_with_its_answer_in_at_most_three_sentences(source_page):
    page = source_page  # (a parameter named "page" would declare the page to the harness)
    text = opening((DOCS / page).read_text())
    assert 1 <= sentences(text) <= 3, f"{page}: {sentences(text)} sentences in its answer"


def home_answer() -> str:
    """The home page's answer (includes/verdicts.md, section ``answer``), links and math as words."""
    source = (REPO / "includes" / "verdicts.md").read_text()
    text = source.split("--8<-- [start:answer]")[1].split("--8<-- [end:answer]")[0]
    return re.sub(r"\$[^$]*\$", "X", re.sub(r"\]\([^)]*\)", "]", text))


def test_the_home_page_opens_with_its_answer_in_at_most_100_words():
    """Issue 38: the answer in at most 100 words a student can repeat, in plain sentences,
    and it says the four things: the variance, the saturation and its gradient, the
    correction, and what the factor is not."""
    home = (DOCS / "index.md").read_text().split("\n## ")[0]
    assert '!!! abstract "The answer"\n    --8<-- "verdicts.md:answer"' in home
    text = home_answer()
    assert words(text) <= 100, f"the home answer has {words(text)} words"
    lengths = [words(s) for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]
    assert max(lengths) <= 25, f"a sentence of {max(lengths)} words in the home answer"
    for said in ("variance $d_k$", "peaked", "gradient", "restores unit variance", "not a temperature",
                 "training works"):
        assert said in (REPO / "includes" / "verdicts.md").read_text().split("[end:answer]")[0], said
