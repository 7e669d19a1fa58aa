"""TeX to MathML Core while the site builds, so no page needs a script or a font from elsewhere.

This Markdown extension replaces ``pymdownx.arithmatex``'s generic TeX wrappers with
math-core's MathML Core, the TeX kept as ``alttext`` (math-core over latex2mathml:
``scripts/compare_math.py``). A page's formulas convert together, so ``\\eqref{eq:name}``
links an equation ``\\label``-ed anywhere on it; a formula that is only such a reference
becomes the plain link (inside ``<math>`` it could not be reached). Two edits, made in the
text so that the rest stays byte for byte as math-core wrote it: ``alttext`` added,
``scriptlevel`` moved to an ``<mstyle>``.
"""

from __future__ import annotations

import html
import re

import math_core
from markdown import Extension
from markdown.postprocessors import Postprocessor
from mkdocs.exceptions import PluginError


MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)
_CONVERTER = math_core.LatexToMathML(fancy_error=False)
#: A formula that is only an equation reference, as math-core writes it: its link (group 1).
_REFERENCE_ONLY = re.compile(r'<math\b[^>]*>\s*<mtext>\s*(<a href="#[^"]*">\(\d+\)</a>)'
                             r"\s*</mtext>\s*</math>")
#: An ``<mtable>``'s opening tag or its closing one.
_TABLE = re.compile(r"(<mtable\b[^>]*>|</mtable>)")


class MathError(PluginError):  # MkDocs reports it naming the page, no traceback
    """A formula that does not convert."""


def render_math(content: str) -> str:
    """Replace arithmatex's generic TeX wrappers in ``content`` with MathML Core."""
    found = list(MATH.finditer(content))
    if not found:
        return content
    formulas = []
    for match in found:
        tex = html.unescape(match.group("tex")).strip()
        tex = tex[2:-2] if tex[:2] in ("\\(", "\\[") else tex
        formulas.append((tex.strip(), match.group("tag") == "div"))
    try:
        mathml = _CONVERTER.convert_all(formulas)
    except math_core.LatexError as error:
        for tex, block in formulas:  # name the formula that fails on its own
            try:
                _CONVERTER.convert_with_local_state(tex, displaystyle=block)
            except math_core.LatexError as alone:
                raise MathError(f"cannot render math ${tex}$: {alone}") from alone
        raise MathError(f"cannot render math: {error}") from error
    pieces, end = [], 0
    for match, (tex, block), converted in zip(found, formulas, mathml):
        reference = None if block else _REFERENCE_ONLY.fullmatch(converted)
        if reference is not None:
            converted = reference[1]
        else:
            alttext = f'<math alttext="{html.escape(tex)}"'
            converted = _scriptlevel_on_mstyle(converted).replace("<math", alttext, 1)
        pieces += [content[end : match.start()],
                   f'<div class="sdpa-math">{converted}</div>' if block else converted]
        end = match.end()
    return "".join(pieces) + content[end:]


def _scriptlevel_on_mstyle(mathml: str) -> str:
    """Move ``scriptlevel`` from each ``<mtable>`` to an ``<mstyle>`` around it: MathML Core
    allows it anywhere, the Nu HTML checker (MathML 3) on ``mstyle`` only; both lay out alike."""
    pieces, moved = [], []  # moved: for each table open here, whether its level went outside
    for piece in _TABLE.split(mathml):
        if piece.startswith("<mtable"):
            level = re.search(r' scriptlevel="([^"]*)"', piece)
            moved.append(level is not None)
            if level:
                piece = f'<mstyle scriptlevel="{level[1]}">' + piece.replace(level[0], "", 1)
        elif piece == "</mtable>" and moved.pop():
            piece += "</mstyle>"
        pieces.append(piece)
    return "".join(pieces)


class _MathML(Postprocessor):
    def run(self, text: str) -> str:
        return render_math(text)


class MathMLExtension(Extension):
    """Convert arithmatex's TeX to MathML in the finished HTML of every page."""

    def extendMarkdown(self, md) -> None:  # noqa: N802 - Markdown's name
        # After raw HTML (30) is put back, so formulas inside executed snippets' output convert too.
        md.postprocessors.register(_MathML(md), "sitebuild_mathml", 5)


makeExtension = MathMLExtension  # Python-Markdown's entry point
