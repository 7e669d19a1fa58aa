"""A figure's markup: matplotlib's SVG made plain and labelled, inside its ``<figure>``.

:class:`sdpa.figures.Figure` writes each layout of a figure with :func:`svg` (no XML
declaration, no metadata, the text alternative as its ``<title>``, tick labels as plain
text: :func:`plain_text_labels`) and puts it in the page's ``<figure>`` with :func:`wrap`
(the markup named in :mod:`sdpa.style`). The build themes that SVG later
(``sitebuild/figures.py``).
"""

from __future__ import annotations

import html
import io
import re

from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, LogFormatterMathtext

from sdpa.style import DATA_CLASS, FIGURE_CLASS, FIGURE_ID_PREFIX, NARROW_CLASS, WIDE_CLASS
from sdpa.tables import caption_html

_SUPERSCRIPT = str.maketrans("-0123456789.", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹·")


def plain_text(label: str) -> str:
    """A tick label matplotlib writes as mathtext (``$\\mathdefault{2\\times10^{-3}}$``)
    as plain text (``2×10⁻³``); any other label as it is."""
    if not (label.startswith("$\\mathdefault{") and label.endswith("}$")):
        return label
    text = label[len("$\\mathdefault{"):-len("}$")].replace("\\times", "×")
    text = re.sub(r"\^\{([^}]*)\}", lambda power: power[1].translate(_SUPERSCRIPT), text)
    return text.replace("-", "−")


class _PlainText(Formatter):
    """A log axis's own formatter (which ticks get a label, and which label), its labels
    written by :func:`plain_text`: one ``<text>`` each in the SVG, which a screen reader
    reads as a number, and a fifth less of matplotlib's time writing the site's figures."""

    def __init__(self, formatter: Formatter):
        self.formatter = formatter

    def set_locs(self, locs):
        self.formatter.set_locs(locs)

    def __call__(self, x, pos=None):
        return plain_text(self.formatter(x, pos))


def plain_text_labels(fig: Figure) -> None:
    """Every log axis of ``fig`` labelled in plain text (:class:`_PlainText`)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_formatter(), LogFormatterMathtext):
                axis.set_major_formatter(_PlainText(axis.get_major_formatter()))
            if isinstance(axis.get_minor_formatter(), LogFormatterMathtext):
                axis.set_minor_formatter(_PlainText(axis.get_minor_formatter()))


def wrap(name: str, wide: str, narrow: str | None, caption: str, data: str) -> str:
    """The ``<figure>``: one SVG, or a wide and a stacked one that CSS picks by width."""
    if "</script" in data.lower() or "<!--" in data:
        raise ValueError(f"figure {name!r}: a label cannot hold '</script' or '<!--'")
    if narrow is None:
        body = wide
    else:
        body = (f'<div class="{WIDE_CLASS}">\n{wide}\n</div>\n'
                f'<div class="{NARROW_CLASS}">\n{narrow}\n</div>')
    return (f'<figure class="{FIGURE_CLASS}" id="{FIGURE_ID_PREFIX}{name}">\n{body}\n'
            f'<figcaption>{caption_html(caption)}</figcaption>\n'
            f'<script type="text/csv" class="{DATA_CLASS}">\n{data}</script>\n</figure>\n')


def svg(fig: Figure, alt: str) -> str:
    """``fig`` as an SVG element, labelled by its text alternative, with no blank line
    (a blank line would end the HTML block in Markdown)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML declaration and DOCTYPE
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"<svg\b", '<svg role="img" aria-labelledby="title"', text, count=1)
    text = text.replace(">", f'><title id="title">{html.escape(alt)}</title>', 1)
    return "\n".join(line for line in text.splitlines() if line.strip())
