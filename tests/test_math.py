"""Math: TeX converted to MathML Core at build time (math-core) and set in the math font
that ships with the site; numbered equations that the prose links to.

The browser test in test_browser.py checks that Chromium lays the formulas out with the
shipped font, in both schemes and at 375 px."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

from conftest import DOCS
from sitebuild.math import _CONVERTER, render_math

FONT = DOCS / "assets" / "fonts" / "stix-math.woff2"
LICENCE = DOCS / "assets" / "fonts" / "STIX-Math-LICENSE.txt"
MATH = re.compile(r"<math\b.*?</math>", re.S)


def test_the_converter_writes_mathml_core():
    html = render_math(
        '<span class="arithmatex">\\(\\text{in\\_features} + \\mathrm{softmax}(z)\\,\\quad\\mathbf{1}\\)</span>'
        '<div class="arithmatex">\\[\\begin{aligned} a &amp;= b \\\\ c &amp;= d \\end{aligned}\\]</div>'
    )
    assert ">in_features<" in html and "<mi>softmax</mi>" in html
    assert "mathvariant" not in html and "mathspace" not in html and "𝟏" in html
    assert html.count("<mtr>") == 2 and 'class="sdpa-math"' in html
    assert 'alttext="\\text{in\\_features}' in html


def test_an_equation_reference_links_to_its_number():
    html = render_math(
        '<span class="arithmatex">\\(\\eqref{eq:x}\\)</span> and '
        '<div class="arithmatex">\\[\\begin{equation} x = 1 \\label{eq:x} \\end{equation}\\]</div>'
    )
    assert 'id="eq:x"' in html
    # The reference alone is a plain link, not a link inside <math> (unreachable there).
    assert html.startswith('<a href="#eq:x">(1)</a> and '), html
    assert not re.search(r"<mtable[^>]*scriptlevel", html), "scriptlevel belongs on an mstyle (vnu)"


def test_the_mathml_is_math_core_s_but_for_its_two_edits():
    """The fix-ups (``alttext`` added, ``scriptlevel`` moved to an ``<mstyle>``) are made in
    the text: the rest stays as math-core wrote it, its named references, empty containers
    and empty elements."""
    tex = r"\ln n \cdot \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} \cancel{x} \, {}^{a}_{b}X < \text{a \& b}"
    mathml = _CONVERTER.convert_with_local_state(tex, displaystyle=True)
    assert "&ApplyFunction;" in mathml and "></mrow>" in mathml and "<mspace/>" in mathml
    html = render_math(f'<div class="arithmatex">\\[{escape(tex)}\\]</div>')
    undone = html.replace(f' alttext="{escape(tex)}"', "", 1).replace("</mtable></mstyle>", "</mtable>")
    undone = re.sub(r'<mstyle scriptlevel="(\d)"><mtable([^>]*)>', r'<mtable\2 scriptlevel="\1">', undone)
    assert undone == f'<div class="sdpa-math">{mathml}</div>'


def test_a_formula_with_a_prime_keeps_its_tex_as_alttext():
    html = render_math('<div class="arithmatex">\\[f\'(x) < \\begin{matrix} a \\end{matrix}\\]</div>')
    assert html.startswith('<div class="sdpa-math"><math alttext="f&#x27;(x) &lt; \\begin{matrix} a \\end{matrix}"')
    assert '<mstyle scriptlevel="0"><mtable' in html and "</mtable></mstyle>" in html


def _italic(letter: str) -> str:
    """The math italic letter Chromium draws for a one-letter <mi>."""
    if letter == "h":
        return "ℎ"
    for start, italic, count in ((0x41, 0x1D434, 26), (0x61, 0x1D44E, 26), (0x391, 0x1D6E2, 25),
                                 (0x3B1, 0x1D6FC, 25)):
        if start <= ord(letter) < start + count:
            return chr(italic + ord(letter) - start)
    return letter


def test_the_shipped_font_has_every_glyph_the_formulas_use(built_site):
    from fontTools.ttLib import TTFont

    font = TTFont(FONT)
    assert "MATH" in font, "not an OpenType MATH font"
    cmap = set(font.getBestCmap())
    needed: dict[str, str] = {}
    for page in built_site.rglob("*.html"):
        for formula in MATH.findall(page.read_text()):
            text = re.sub(r"&#?\w+;", "", re.sub(r"<[^>]+>", "", formula))
            for char in text:
                needed.setdefault(char, page.parent.name)
            for letter in re.findall(r"<mi>(.)</mi>", formula):
                needed.setdefault(_italic(letter), page.parent.name)
    missing = {c: where for c, where in needed.items() if not c.isspace() and ord(c) not in cmap}
    assert not missing, f"glyphs missing from {FONT.name}: {missing} (run scripts/subset_math_font.py)"
    assert LICENCE.is_file() and "SIL Open Font License" in LICENCE.read_text()
    assert FONT.stat().st_size < 120_000


def test_pages_declare_the_font_and_number_the_equations_they_refer_to(built_site):
    css = (built_site / "assets" / "site.css").read_text()
    assert re.search(r'@font-face\s*{[^}]*"SDPA Math"[^}]*url\("fonts/stix-math.woff2"\)', css)
    assert (built_site / "assets" / "fonts" / "stix-math.woff2").is_file()
    assert (built_site / "assets" / "fonts" / "STIX-Math-LICENSE.txt").is_file()
    pages = {p: p.read_text() for p in built_site.rglob("index.html")}
    anchors = {p: set(re.findall(r'\bid="([^"]+)"', text)) for p, text in pages.items()}
    referred = 0
    for path, text in pages.items():
        for target in re.findall(r'href="([^"]*#eq:[^"]+)"', text):
            page, anchor = target.split("#")
            goal = (path.parent / page / "index.html").resolve() if page else path
            assert anchor in anchors[Path(goal)], f"{path}: {target} names no equation"
            referred += 1
    assert referred >= 2
    derivation = pages[built_site / "derivation" / "index.html"]
    assert all(f'id="eq:{name}"' in derivation for name in ("variance", "std", "scaled"))
    assert "merror" not in "".join(pages.values())


@pytest.mark.parametrize("tex", [r"\frac{1}{\sqrt{d_k}}", r"\mathrm{Var}(q \cdot k) = d_k"])
def test_no_tex_is_left_in_the_text(tex):
    html = render_math(f'<span class="arithmatex">\\({tex}\\)</span>')
    text = re.sub(r"<[^>]+>", "", html.split(">", 1)[1])
    assert "\\" not in text
