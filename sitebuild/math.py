"""TeX to MathML while the site builds, so no page needs a script or a font from elsewhere.

``pymdownx.arithmatex`` (generic mode) leaves each formula as TeX inside
``<span class="arithmatex">`` or ``<div class="arithmatex">``; this Markdown extension
replaces those wrappers with MathML from latex2mathml, keeping the TeX as ``alttext``.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert as latex_to_mathml
from markdown import Extension
from markdown.postprocessors import Postprocessor

try:  # under MkDocs, a build error it reports as one (page named, no traceback)
    from mkdocs.exceptions import PluginError as _BuildError
except ImportError:  # pragma: no cover - another engine
    _BuildError = ValueError

MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)


class MathError(_BuildError):
    """A formula that does not convert."""


def render_math(content: str) -> str:
    """Replace arithmatex's generic TeX wrappers in ``content`` with MathML."""

    def to_mathml(match: re.Match) -> str:
        tex = html.unescape(match.group("tex")).strip()
        block = match.group("tag") == "div"
        tex = tex[2:-2] if tex[:2] in ("\\(", "\\[") else tex
        if "&" in tex or "\\begin" in tex:
            raise MathError(f"aligned environments do not render; split ${tex[:40]}...$")
        try:
            mathml = latex_to_mathml(tex, display="block" if block else "inline")
        except Exception as error:  # the converter raises many types
            raise MathError(f"cannot render math ${tex}$: {error}") from error
        mathml = mathml.replace("<math ", f'<math alttext="{html.escape(tex)}" ', 1)
        return f'<div class="sdpa-math">{mathml}</div>' if block else mathml

    return MATH.sub(to_mathml, content)


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
