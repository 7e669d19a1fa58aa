"""TeX to MathML Core while the site builds, so no page needs a script or a font from elsewhere.

``pymdownx.arithmatex`` (generic mode) leaves each formula as TeX inside
``<span class="arithmatex">`` or ``<div class="arithmatex">``; this Markdown extension
replaces those wrappers with MathML Core from math-core, keeping the TeX as ``alttext``.

math-core was chosen over latex2mathml (``scripts/compare_math.py`` runs both on every
formula of a built site): it writes ``\\text{in\\_features}`` as ``in_features``,
``\\mathrm{softmax}`` as one ``<mi>``, spaces as lengths rather than the named spaces
MathML Core dropped, bold and blackboard letters as their Unicode characters rather than
``mathvariant``, and it sets ``aligned`` environments and numbered equations. All the
formulas of a page convert together, so ``\\eqref{eq:name}`` links to an equation
``\\label``-ed anywhere on the page (the number in a ``(n)`` link, the equation's
``id`` the label). A formula that is only such a reference becomes the plain link: inside
``<math>`` (whose children assistive technology reads as one formula, ARIA's ``math``
role) a link cannot be reached, and axe-core reports it as nested-interactive.
"""

from __future__ import annotations

import html
import re

import math_core
from markdown import Extension
from markdown.postprocessors import Postprocessor

try:  # under MkDocs, a build error it reports as one (page named, no traceback)
    from mkdocs.exceptions import PluginError as _BuildError
except ImportError:  # pragma: no cover - another engine
    _BuildError = ValueError

MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)
_CONVERTER = math_core.LatexToMathML(fancy_error=False)
_REFERENCE_ONLY = re.compile(r'<math[^>]*>\s*<mtext>\s*(<a href="#[^"]+">\(\d+\)</a>)\s*</mtext>\s*</math>')


class MathError(_BuildError):
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
        reference = None if block else _REFERENCE_ONLY.fullmatch(converted.strip())
        if reference:
            converted = reference.group(1)
        else:
            converted = _scriptlevel_on_mstyle(converted)
            converted = converted.replace("<math", f'<math alttext="{html.escape(tex)}"', 1)
        pieces += [content[end : match.start()],
                   f'<div class="sdpa-math">{converted}</div>' if block else converted]
        end = match.end()
    return "".join(pieces) + content[end:]


_TABLE_TAG = re.compile(r'<mtable\b(?P<attrs>[^>]*)>|</mtable>')


def _scriptlevel_on_mstyle(mathml: str) -> str:
    """Move ``scriptlevel`` from an ``<mtable>`` to an ``<mstyle>`` around it.

    MathML Core allows the attribute on every element, but the Nu HTML checker still
    follows MathML 3, where it belongs to ``mstyle``; the two spellings lay out the same.
    """
    wrapped: list[bool] = []

    def tag(match: re.Match) -> str:
        if match.group(0) == "</mtable>":
            return "</mtable></mstyle>" if wrapped.pop() else match.group(0)
        level = re.search(r'\s*scriptlevel="([^"]*)"', match.group("attrs"))
        wrapped.append(level is not None)
        if level is None:
            return match.group(0)
        attrs = match.group("attrs").replace(level.group(0), "")
        return f'<mstyle scriptlevel="{level.group(1)}"><mtable{attrs}>'

    return _TABLE_TAG.sub(tag, mathml)


class _MathML(Postprocessor):
    def run(self, text: str) -> str:
        return render_math(text)


class MathMLExtension(Extension):
    """Convert arithmatex's TeX to MathML in the finished HTML of every page."""

    def extendMarkdown(self, md) -> None:  # noqa: N802 - Markdown's name
        # After raw HTML (30) is put back, so formulas inside executed snippets' output convert too.
        md.postprocessors.register(_MathML(md), "sitebuild_mathml", 5)


def makeExtension(**kwargs) -> MathMLExtension:  # noqa: N802 - Markdown's name
    return MathMLExtension(**kwargs)
