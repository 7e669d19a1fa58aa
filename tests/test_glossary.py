"""The glossary: each term defined once in includes/glossary.md, marked in the pages'
text (never in code, math, headings or links), listed on the Glossary page."""

from __future__ import annotations

import html
import re

import torch
from conftest import REPO
from sitebuild.glossary import definitions

from sdpa import survey

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


def test_what_the_definitions_of_saturation_and_gap_say():
    """The saturation entry says what holds of a saturated row (peaked, not necessarily
    one-hot) and leaves the row-length comparison to the failure-modes page's section, whose
    verdict is tested there (tests/test_failure_modes.py), with that verdict's scope."""
    defined, _ = terms()
    saturation = defined["saturation"]
    assert "nearly one-hot" not in saturation and "need not make it one-hot" in saturation
    assert "at dₖ = 64 and 128" in saturation
    assert "section on what a saturated row does to the gradient" in saturation
    page = (REPO / "docs" / "failure-modes.md").read_text()
    assert "### Does a saturated row kill the gradient? {#what-a-saturated-row-does-to-the-gradient}" in page
    # the Frobenius entry names where the site uses it: the limits page's soft-capping table
    assert "limits page's soft-capping table" in defined["Frobenius norm"]
    assert "Frobenius norm of the Jacobian" in (REPO / "snippets" / "limits" / "soft_capping.py").read_text()
    # the LR-sensitivity entry: the QK-norm page over learning rates from the initial loss, the
    # tuning page along lines of the plane (points at their best shared rate) from chance
    assert "lr_sensitivity(mean, initial)" in (REPO / "snippets" / "qk-norm" / "lr_sensitivity.py").read_text()
    tuning = (REPO / "snippets" / "tuning" / "plane_table.py").read_text()
    assert "lr_sensitivity(along_w, r.chance)" in tuning and "r.surface.exp()" in tuning
    assert "L₀ the chance loss" in defined["LR sensitivity"]
    # the gap entry: a gap of 40 and an even split between the top two keys
    p = torch.softmax(torch.tensor([10.0, 10.0, -30.0], dtype=torch.float64), -1)
    assert p[0] == p[1] and abs(p[0] - 0.5) < 1e-15
    defined, _ = terms()
    assert "[10, 10, −30] has a gap of 40 and splits evenly" in defined["gap"]
    assert "not a temperature" in defined["temperature"]
    for term in ("keys in play", "gap", "trace", "Frobenius norm", "LR sensitivity", "relative slope"):
        assert term in defined, term


def test_the_issue_terms_and_one_hot_as_the_pages_count_it():
    defined, _ = terms()
    for term in ("quick profile", "full profile", "survey", "arm", "invariant", "keys in play",
                 "seed offset", "t interval", "starting spread", "one-hot"):
        assert term in defined, term
    # one-hot means what survey.ONE_HOT counts: the largest weight above 0.99
    assert f"above {survey.ONE_HOT}" in defined["one-hot"]
    notation = (REPO / "docs" / "glossary.md").read_text()
    assert "## Notation" in notation and f"largest weight is above\n{survey.ONE_HOT}" in notation
    symbols = re.findall(r"^\| (\$[^|]+\$(?:, \$[^|]+\$)*) \|", notation, re.M)
    assert len(symbols) == len(set(symbols)), "one row per symbol"
