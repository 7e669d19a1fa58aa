"""Summaries include, never retype (issues 36 and 38): a verdict lives in one section of
``includes/verdicts/<page>.md``; the summaries include it, or link to the evidence.

The summaries: the home page's answer and its claims ("The usual claims, measured"), and the
whole interview page (its opening box and its sources aside). The lab notebook's text is
checked in tests/test_lab.py: it states no result, its last cell prints them.

The rule, checkable on the Markdown: a summary's every block (paragraph, list item) is

- an include of a verdict section: ``--8<-- "verdicts/<page>.md:<name>"`` (or the home
  answer's ``verdicts.md:<name>``);
- an executed snippet fence of the page's own (``snippets/<page>/...``): it prints what it
  measured;
- or text whose own words, with questions, quoted claims, math, code and the texts of links
  left out, are at most five: a label (**1. The spread.**), a question, a quoted claim, an
  ``Evidence:`` line of links. Five words cannot hold a verdict.

On the home page each claim is a ``###`` subsection headed by a question, holding one or more
includes (in a box that opens under the question, or not), any snippets of its own that print
what the build measured, and one ``Evidence:`` line of links, and nothing else.
"""

from __future__ import annotations

import math

import re

import pytest

from conftest import DOCS, REPO

INCLUDE = re.compile(r'^--8<-- "(verdicts(?:/[\w-]+)?\.md):([\w-]+)"$')
OWN_WORDS = 5
LINK_WORDS = 8


BOX = re.compile(r'^(?:\?\?\?\+?|!!!) [\w-]+(?: "([^"]*)")?$')


def blocks(markdown: str) -> list[str]:
    """The Markdown's blocks: fences whole, then paragraphs and list items. A box (``???``
    or ``!!!``) is its title line, a block of its own, then its body's blocks, dedented."""
    markdown = re.sub(r'^((?:\?\?\?\+?|!!!) .*)$', r"\1\n", markdown, flags=re.M)
    markdown = re.sub(r"^    ", "", markdown, flags=re.M)
    out: list[str] = []
    for part in re.split(r"(^```.*?^```$)", markdown, flags=re.S | re.M):
        if part.startswith("```"):
            out.append(part)
            continue
        for paragraph in re.split(r"\n[ \t]*\n", part):
            items = re.split(r"\n(?=- )", paragraph.strip())
            out.extend(item.strip() for item in items if item.strip())
    return out


def own_words(block: str) -> list[str]:
    """The words a block says in its own voice: not a question, quoted claim, link text, math
    or code, and not the ``Evidence:`` label."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", " ", block)           # links
    text = re.sub(r"\$[^$]*\$|`[^`]*`", " X ", text)               # math, code
    text = re.sub(r"“[^”]*”", " ", text)                            # quoted claims
    text = re.sub(r"\*\*[^*]*\?\*\*", " ", text)                    # bold questions
    text = re.sub(r"^#+ .*\?$", " ", text, flags=re.M)             # questions as headings
    text = re.sub(r"\bEvidence:", " ", text)
    return re.findall(r"[A-Za-z][\w'’-]*", text)


def check(block: str, page: str) -> str | None:
    """Why a summary block breaks the rule, or None."""
    if block.startswith("```"):
        title = re.search(r'title="snippets/([\w-]+)/', block)
        return None if title and title.group(1) == page else "a fence that is not the page's own snippet"
    if block.startswith("--8<--"):
        return None if INCLUDE.match(block) else f"an include that is not a verdict section: {block}"
    if block.startswith("#"):
        return None  # a heading: the page's structure
    box = BOX.match(block)
    if box:  # a box's title: a question, or a label of at most five words
        title = box.group(1) or ""
        return None if title.endswith("?") or len(own_words(title)) <= OWN_WORDS else f"a box titled {title!r}"
    for text in re.findall(r"\[([^\]]*)\]\(", block):
        if len(text.split()) > LINK_WORDS:
            return f"a link text of {len(text.split())} words: {text!r}"
    said = own_words(block)
    return None if len(said) <= OWN_WORDS else f"{len(said)} words of its own: {' '.join(said)!r}"


def region(markdown: str, start: str, end: str | None) -> str:
    text = markdown.split(start, 1)[1]
    return text.split(end, 1)[0] if end else text


def test_the_home_answer_is_included():
    home = (DOCS / "index.md").read_text()
    title, box = home.split("\n\n")[:2]
    assert title.startswith("# ") and box == '!!! abstract "The answer"\n    --8<-- "verdicts.md:answer"'


def test_every_home_claim_is_a_question_a_verdict_included_and_a_link():
    claims = region((DOCS / "index.md").read_text(), "## The usual claims, measured\n", "\n## ")
    subsections = claims.split("\n### ")[1:]
    assert len(subsections) >= 10, "the usual claims, one subsection each"
    for subsection in subsections:
        heading, body = subsection.split("\n", 1)
        assert heading.endswith("?"), f"a claim's heading is the claim as a question: {heading}"
        parts = [b for b in blocks(body) if not BOX.match(b)]  # a box's title: checked below
        titles = [b for b in blocks(body) if BOX.match(b)]
        assert all(check(b, "index") is None for b in titles), f"{heading}: {titles}"
        includes = [b for b in parts if INCLUDE.match(b) and b.startswith('--8<-- "verdicts/')]
        snippets = [b for b in parts if b.startswith("```") and check(b, "index") is None]
        evidence = [b for b in parts if b.startswith("Evidence: [")]
        assert includes and len(evidence) == 1 and len(parts) == len(includes) + len(snippets) + 1, (
            f"{heading}: verdict includes, the page's own snippets (what this build measured) "
            f"and one Evidence line, nothing else: {parts}")
        assert not own_words(evidence[0]), f"{heading}: the Evidence line holds only links"


def test_the_interview_says_nothing_in_its_own_words():
    page = (DOCS / "interview.md").read_text()
    body = region(page, "\n## ", '\n??? quote "Sources"')
    broken = [f"{why}\n    in: {block[:120]!r}" for block in blocks(body) if (why := check(block, "interview"))]
    assert not broken, "interview blocks that are not includes, questions or links:\n" + "\n".join(broken)
    # the answer at three lengths
    for length in ("In one sentence", "In one minute", "In five minutes"):
        assert f"## {length}" in page


def test_the_rule_itself():
    assert check('--8<-- "verdicts/tuning.md:identity"', "interview") is None
    assert check('--8<-- "interview/key_numbers.py"', "interview")
    assert check("**Does LayerNorm remove the need?**\nEvidence: [practice](practice.md).", "x") is None
    assert check("- “Gemma 2 ships QK-norm.” [Who uses what](qk-norm.md#who-uses-what).", "x") is None
    assert check('??? question "Does LayerNorm remove the need for the factor?"', "x") is None
    assert check('??? question "LayerNorm does not replace the factor at any width"', "x")
    assert blocks('??? question "Q?"\n    --8<-- "verdicts/practice.md:layernorm"\n\n    Evidence: [a](b.md).\n') == [
        '??? question "Q?"', '--8<-- "verdicts/practice.md:layernorm"', "Evidence: [a](b.md)."]
    assert check("No learning rate rescues the unscaled start within 150 steps.", "x")
    assert check("Evidence: [no learning rate rescues the unscaled start within its budget](t.md).", "x")


def included() -> list[tuple[str, str, str]]:
    """Every verdict section the summaries include: (page, file, section)."""
    found = []
    for page in ("index.md", "interview.md"):
        for line in (DOCS / page).read_text().splitlines():
            match = INCLUDE.match(line.strip())
            if match:
                found.append((page, match.group(1), match.group(2)))
    return found


def test_every_included_verdict_section_exists():
    """The build fails on a missing section too (pymdownx.snippets, check_paths); this lists
    the sections the summaries wait for while their pages' helpers write them."""
    missing = sorted({f"{name}:{part} (included by {page})" for page, name, part in included()
                      if not (REPO / "includes" / name).is_file()
                      or f"--8<-- [start:{part}]" not in (REPO / "includes" / name).read_text()})
    assert not missing, "verdict sections that do not exist yet:\n" + "\n".join(missing)


@pytest.mark.pages("tuning.md", "index.md", "interview.md")
def test_the_summaries_print_the_tuning_pages_reading(run_snippet):
    """Home and interview print what the tuning page prints under its plane's table: one
    function (``sdpa.tuning.unscaled_reading``), the same runs."""
    page = run_snippet("tuning/plane_table.py").output
    for snippet in ("index/training.py", "interview/training.py"):
        said = run_snippet(snippet).namespace["result"]
        assert said.startswith("Without the factor") and said in page, snippet


@pytest.mark.pages("tuning.md", "index.md")
def test_the_home_page_prints_the_starting_spread_table_s_intervals(run_snippet):
    """Home prints, per starting spread, the interval the tuning page's table prints for it (the
    same runs, ``sdpa.plane.run_spreads``), in the words that interval decides."""
    table = run_snippet("tuning/starting_spread.py")
    home = run_snippet("index/training.py")
    spreads = home.namespace["spreads"]
    assert [x for x, _, _ in spreads] == [p["spread"] for p in table.namespace["result"]]
    for (x, _, interval), point in zip(spreads, table.namespace["result"]):
        assert interval == point["log_ratio"] and interval.ratio() in table.output
        row = rf"\| {re.escape(f'{x:.3g}')}( \([^|]*\))? \| {re.escape(interval.compared())} \|"
        assert re.search(row, home.output), row


@pytest.mark.pages("transfer.md", "index.md")
def test_the_home_page_says_whether_one_rate_serves_every_head_size(run_snippet):
    """Home prints the transfer page's answer to "does one rate serve every head size?" from
    the same intervals (``sdpa.transfer.rate_change``), or, where the build measured one head
    size, says that the full build answers it."""
    home = run_snippet("index/training.py")
    transfer = home.namespace["transfer"]
    if None in transfer.values():
        assert "the full build answers it" in home.output
        return
    page = run_snippet("transfer/best_rates.py")
    for optimizer, interval in transfer.items():
        m, low, high = (math.exp(x) for x in (interval.mean, interval.low, interval.high))
        cell = f"×{m:.2f} [{low:.2f}, {high:.2f}]"
        assert cell in page.output and cell in home.output, optimizer
        words = "it moves" if interval.excludes_zero else "not told apart from one rate"
        assert f"{cell}, {words}" in home.output
