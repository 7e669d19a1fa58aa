"""The glossary: every term defined once, shown on hover and focus, listed on one page.

``includes/glossary.md``'s abbreviations (``*[logit]: A raw score ...``), appended to every
page, become ``<abbr title="...">`` tooltips (``abbr``, Material's ``content.tooltips``).
This Markdown extension adds aliases (``*[μP]: muP`` borrows its definition) and plurals of
lower-case terms, keeps headings and links plain, and turns ``<!-- glossary -->`` into the
Glossary page's list of every term.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree

from markdown import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from sitebuild import markdown_extension, markup

DEFINITION = re.compile(r"^\*\[(?P<term>[^\]]+)\]:[ ]*(?P<text>.+)$")
MARKER = "<!-- glossary -->"
_PLURAL = re.compile(r"^[a-z][a-z -]*[a-rt-z]$")  # lower-case words not ending in s


def definitions(lines: list[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The terms defined in ``lines`` with their definitions (aliases resolved), and each
    term's aliases."""
    found = {m["term"]: m["text"].strip() for m in map(DEFINITION.match, lines) if m}
    aliases: dict[str, list[str]] = {}
    for term, text in found.items():
        if text in found:
            aliases.setdefault(text, []).append(term)
    return {term: found.get(text, text) for term, text in found.items()}, aliases


class _Definitions(Preprocessor):
    """Resolve aliases, add plurals, and write the Glossary page's list."""

    def run(self, lines: list[str]) -> list[str]:
        terms, aliases = definitions(lines)
        if not terms:
            return lines
        kept = [line for line in lines if not DEFINITION.match(line)]
        plurals = {f"{t}s": text for t, text in terms.items() if _PLURAL.match(t)}
        glossary = [f"*[{term}]: {text}" for term, text in {**plurals, **terms}.items()]
        if MARKER in (line.strip() for line in kept):
            listed = [t for t in terms if not any(t in names for names in aliases.values())]
            entries = "".join(
                f'<dt id="{_slug(term)}">{html.escape(", ".join([term, *aliases.get(term, [])]))}</dt>'
                f"<dd>{html.escape(terms[term])}</dd>"
                for term in listed
            )
            kept = [f'<dl class="sdpa-glossary">{entries}</dl>' if line.strip() == MARKER else line
                    for line in kept]
        # One block per definition (a blank line before each): abbr takes one definition
        # from the front of a block at a time and hands the rest back, so a single block of
        # all of them is searched by every block processor once per definition (quadratic:
        # most of a short page's Markdown time). The abbreviations, and the HTML, are the same.
        return [*kept, *(line for definition in glossary for line in ("", definition))]


def _slug(term: str) -> str:
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


class _PlainHeadingsAndLinks(Treeprocessor):
    """After ``abbr``: a term inside a heading or a link goes back to plain text."""

    PLAIN = {"a", "h1", "h2", "h3", "h4", "h5", "h6"}

    def run(self, root: etree.Element) -> None:
        parents = {child: parent for parent in root.iter() for child in parent}
        for abbr in list(root.iter("abbr")):
            node = abbr
            while node in parents and node.tag not in self.PLAIN:
                node = parents[node]
            if node.tag in self.PLAIN:  # the term, which has no children, becomes its text
                parent = parents[abbr]
                markup.append_text(parent, parent[:list(parent).index(abbr)], (abbr.text or "") + (abbr.tail or ""))
                parent.remove(abbr)


class GlossaryExtension(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        # After pymdownx.snippets (32) has appended the glossary, before abbr reads it.
        md.preprocessors.register(_Definitions(md), "sdpa_glossary", 31)
        # After abbr (7) has marked the terms, before toc (5) reads the headings.
        md.treeprocessors.register(_PlainHeadingsAndLinks(md), "sdpa_glossary_terms", 6)


makeExtension, on_config = markdown_extension(GlossaryExtension)  # Python-Markdown's entry point, and the hook
