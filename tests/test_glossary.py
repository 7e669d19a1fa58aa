"""The glossary: each term defined once in includes/glossary.md, marked in the pages'
text (never in code, math, headings or links), listed on the Glossary page."""

from __future__ import annotations

import html
import re

import pytest
import torch
from conftest import REPO
from sitebuild.glossary import definitions

from sdpa import survey
from sdpa.attention import Scale

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


@pytest.mark.claims
@pytest.mark.pages("failure-modes.md")
def test_what_the_definitions_of_saturation_and_gap_say(run_snippet, claim):
    """The saturation entry: a scaled row's spectral norm falls as the row lengthens, a saturated
    row's does not, so at d_k = 64 the unscaled rows' is the smaller in rows of 16 keys and the
    larger in rows of 64 (the survey's rows of the failure-modes page's row-length table, unit-
    variance q and k, 8 to 128 keys: means and medians)."""
    d_k, row_length = 64, run_snippet("failure-modes/row_length.py").namespace
    lengths = row_length["ROW_LENGTHS"]
    norms = {(rule, n): survey.rows(d_k, survey.factor(rule, d_k), n).spectral_norm  # the snippet's memo
             for rule in (Scale.NONE, Scale.INV_SQRT) for n in lengths}
    scaled = [norms[Scale.INV_SQRT, n].mean().item() for n in lengths]
    unscaled = [norms[Scale.NONE, n].mean().item() for n in lengths]
    for n, a, b in zip(lengths[1:], scaled, scaled[1:]):
        claim.below(f"scaled mean norm falls at {n} keys", b, a)
    claim.above("scaled mean norm, first length over 64 keys", scaled[0] / scaled[lengths.index(64)], 2)
    # "does not fall": the longest rows' mean norm is not below the shortest's (5% allowed)
    claim.above("unscaled mean norm, longest rows over shortest", unscaled[-1] / unscaled[0], 0.95, log=True)
    for statistic in (torch.mean, torch.median):
        name = statistic.__name__
        claim.below(f"16 keys: unscaled {name} norm over scaled",
                    (statistic(norms[Scale.NONE, 16]) / statistic(norms[Scale.INV_SQRT, 16])).item(), 1, log=True)
        claim.above(f"64 keys: unscaled {name} norm over scaled",
                    (statistic(norms[Scale.NONE, 64]) / statistic(norms[Scale.INV_SQRT, 64])).item(), 1, log=True)
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
