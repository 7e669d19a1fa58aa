"""TeX to MathML Core while the site builds, so no page needs a script or a font from elsewhere.

This Markdown extension replaces ``pymdownx.arithmatex``'s generic TeX wrappers with
math-core's MathML Core, the TeX kept as ``alttext`` (math-core over latex2mathml:
``scripts/compare_math.py``). A page's formulas convert together, so ``\\eqref{eq:name}``
links an equation ``\\label``-ed anywhere on it; a formula that is only such a reference
becomes the plain link (inside ``<math>`` it could not be reached). The MathML is edited as a
tree (``markup.py``): ``alttext`` added, ``scriptlevel`` moved to an ``<mstyle>``.
"""

from __future__ import annotations

import html
import re

import math_core
from markdown import Extension
from markdown.postprocessors import Postprocessor

from sitebuild import markup

try:  # under MkDocs, a build error it reports as one (page named, no traceback)
    from mkdocs.exceptions import PluginError as _BuildError
except ImportError:  # pragma: no cover - another engine
    _BuildError = ValueError

MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)
_CONVERTER = math_core.LatexToMathML(fancy_error=False)
#: math-core's MathML: ``<tag/>`` for MathML's empty elements only (an empty container is
#: ``<tag></tag>``), two invisible operators as named references; and the ``alttext`` this
#: step adds, escaped as :func:`html.escape` escapes it.
MATH_CORE = markup.Dialect(empty=frozenset({"mspace", "mprescripts", "none", "malignmark", "maligngroup"}),
                           entities={"ApplyFunction": "\u2061", "InvisibleTimes": "\u2062"}, apostrophes=True)
_NUMBER = re.compile(r"\(\d+\)")


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
        math = markup.parse(converted, MATH_CORE)
        reference = None if block else _reference_only(math)
        if reference is not None:
            converted = markup.write(reference, MATH_CORE)
        else:
            _scriptlevel_on_mstyle(math)
            math.attrib = {"alttext": tex, **math.attrib}
            converted = markup.write(math, MATH_CORE)
        pieces += [content[end : match.start()],
                   f'<div class="sdpa-math">{converted}</div>' if block else converted]
        end = match.end()
    return "".join(pieces) + content[end:]


def _reference_only(math: markup.Element) -> markup.Element | None:
    """The link of a formula that is only an equation reference, ``<math><mtext><a
    href="#eq:name">(n)</a></mtext></math>``, or None."""
    text = _only_child(math)
    link = _only_child(text) if text is not None and text.tag == "mtext" and not text.attrib else None
    if (link is None or link.tag != "a" or list(link.attrib) != ["href"] or not link.get("href").startswith("#")
            or len(link) or not _NUMBER.fullmatch(link.text or "")):
        return None
    link.tail = None
    return link


def _only_child(element: markup.Element) -> markup.Element | None:
    """``element``'s one child, if it holds nothing else but whitespace."""
    if len(element) != 1 or (element.text or "").strip() or (element[0].tail or "").strip():
        return None
    return element[0]


def _scriptlevel_on_mstyle(math: markup.Element) -> None:
    """Move ``scriptlevel`` from an ``<mtable>`` to an ``<mstyle>`` around it: MathML Core
    allows it anywhere, the Nu HTML checker (MathML 3) on ``mstyle`` only; both lay out alike."""
    for parent in [element for element in math.iter() if any(child.tag == "mtable" for child in element)]:
        for index, table in enumerate(list(parent)):
            if table.tag == "mtable" and "scriptlevel" in table.attrib:
                style = markup.Element("mstyle", scriptlevel=table.attrib.pop("scriptlevel"))
                style.tail, table.tail = table.tail, None
                style.append(table)
                parent[index] = style


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
