"""The glossary: each term defined once in includes/glossary.md, marked in the pages'
text (never in code, math, headings or links), listed on the Glossary page."""

from __future__ import annotations

import html
import re

from conftest import REPO
from sitebuild.glossary import definitions

GLOSSARY = REPO / "includes" / "glossary.md"
ABBR = re.compile(r'<abbr title="([^"]*)">([^<]*)</abbr>')


def terms():
    return definitions(GLOSSARY.read_text().splitlines())


def test_every_term_is_defined_once_and_the_issue_terms_are_there():
    lines = [line for line in GLOSSARY.read_text().splitlines() if line.strip()]
    names = [re.match(r"^\*\[([^\]]+)\]: ", line).group(1) for line in lines]
    assert len(names) == len(set(names)) == len(lines), "one '*[term]: definition' per line, each once"
    defined, aliases = terms()
    for term in ("logit", "temperature", "saturation", "entropy", "Jacobian", "spectral norm",
                 "QK-norm", "soft-capping", "muP", "d_k", "d_model", "softmax", "attention head"):
        assert term in defined
    texts = [text for term, text in defined.items() if not any(term in a for a in aliases.values())]
    assert len(texts) == len(set(texts)), "two terms share a definition: make one an alias"
    assert all("<" not in text and '"' not in text for text in texts), "definitions are plain text"


def test_terms_are_marked_in_prose_only(built_site):
    defined, _ = terms()
    page = (built_site / "derivation" / "index.html").read_text()
    marked = ABBR.findall(page)
    assert {"d_k", "softmax", "logits"} <= {text for _, text in marked}
    assert all(html.unescape(title) == defined.get(text, defined.get(text[:-1])) for title, text in marked)
    for path in built_site.rglob("index.html"):
        text = path.read_text()
        for inside in (r"<pre\b.*?</pre>", r"<code\b.*?</code>", r"<math\b.*?</math>",
                       r"<h[1-6]\b.*?</h[1-6]>", r"<a\b[^>]*>.*?</a>"):
            for block in re.findall(inside, text, re.S):
                assert "<abbr" not in block, f"{path}: a term marked inside {block[:120]!r}"


def test_headings_keep_their_plain_anchors(built_site):
    page = (built_site / "failure-modes" / "index.html").read_text()
    for level, anchor, inner in re.findall(r'<h([23]) id="([^"]+)">(.*?)</h\1>', page, re.S):
        assert "abbr" not in anchor and "<abbr" not in inner


def test_the_glossary_page_lists_every_term(built_site):
    defined, aliases = terms()
    page = (built_site / "glossary" / "index.html").read_text()
    listed = dict(re.findall(r'<dt id="term-[a-z0-9-]+">([^<]*)</dt><dd>([^<]*)</dd>', page))
    names = {name for entry in listed for name in html.unescape(entry).split(", ")}
    assert names == set(defined)
    for entry, text in listed.items():
        assert html.unescape(text) == defined[html.unescape(entry).split(", ")[0]]
