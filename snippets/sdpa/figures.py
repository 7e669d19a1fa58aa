"""Figures as inline SVG that follow the page's light or dark scheme.

Use it as a context manager; the SVG is ready in ``.html`` when the block ends::

    fig = Figure("score-spread", caption="...", alt="...", ncols=2)
    with fig as (left, right):
        left.plot(x, y)
    print(fig.html)

Inside the block matplotlib runs under the site's style (``rc_context``), on a
``matplotlib.figure.Figure`` that pyplot never sees, so neither rcParams nor open
figures leak into the next snippet. The output is byte-identical from run to run:
the hash salt is the figure's name, the date is dropped, and every SVG id is
prefixed with the name so that several figures can share a page.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure as _MplFigure  # noqa: E402

#: Placeholder colour for text, axes and ticks; swapped for ``currentColor`` so that
#: the figure takes the page's foreground colour in light and in dark mode.
INK = "#010203"

#: Data colours chosen to read on both the white and the slate background.
PALETTE = ["#4c8fe0", "#f0913a", "#3fb27f", "#e15759", "#b07cc6", "#c9a227", "#6bc4d6", "#9a9a9a"]

STYLE: dict[str, Any] = {
    "svg.fonttype": "none",  # real <text>: light, selectable, searchable
    "svg.image_inline": True,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "text.color": INK,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "axes.titlecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "grid.color": INK,
    "grid.alpha": 0.18,
    "axes.grid": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "lines.linewidth": 1.8,
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.transparent": True,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "image.interpolation": "nearest",
}

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Figure:
    """One figure of a page: a matplotlib figure in, captioned inline SVG out."""

    def __init__(
        self,
        name: str,
        *,
        caption: str,
        alt: str,
        nrows: int = 1,
        ncols: int = 1,
        size: tuple[float, float] | None = None,
        **subplot_kw: Any,
    ) -> None:
        if not _SLUG.match(name):
            raise ValueError(f"figure name {name!r}: use lowercase letters, digits and '-'")
        if not caption.strip() or not alt.strip():
            raise ValueError(f"figure {name!r} needs a caption and a text alternative")
        self.name, self.caption, self.alt = name, caption, alt
        self.shape = (nrows, ncols)
        self.size = size or (3.4 * ncols + 0.6, 3.0 * nrows)
        self.subplot_kw = subplot_kw
        self.html = ""
        self.figure: _MplFigure | None = None
        self._rc = None

    def __enter__(self):
        self._rc = rc_context({**STYLE, "svg.hashsalt": self.name})
        self._rc.__enter__()
        self.figure = _MplFigure(figsize=self.size, layout="constrained")
        axes = self.figure.subplots(*self.shape, squeeze=True, **self.subplot_kw)
        return axes

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                wide = _svg(self.figure, self.name, self.alt)
                narrow = None
                if self.shape[1] > 1:  # panels side by side: also a stacked layout for phones
                    _stack_panels(self.figure, self.size, self.shape)
                    narrow = _svg(self.figure, f"{self.name}-narrow", self.alt)
                self.html = _wrap(self.name, wide, narrow, self.caption)
        finally:
            self.figure = None  # no pyplot registry: dropping the reference frees it
            self._rc.__exit__(exc_type, exc, tb)


_PALETTE_INDEX = {colour.lower(): i for i, colour in enumerate(PALETTE)}
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def _themed_palette(style: re.Match) -> str:
    """Write each :data:`PALETTE` colour in a style as ``var(--sdpa-cN, colour)``.

    ``docs/assets/site.css`` gives the light scheme darker shades of the same hues, so
    data lines keep a 3:1 contrast on white; without the stylesheet the colour stays.
    """
    def swap(hex_colour: re.Match) -> str:
        index = _PALETTE_INDEX.get(hex_colour.group(0).lower())
        return hex_colour.group(0) if index is None else f"var(--sdpa-c{index}, {hex_colour.group(0)})"

    return _HEX.sub(swap, style.group(0))


#: Width in inches of a figure's stacked layout: drawn at about its natural size on a
#: phone, so its text stays as large as the page's captions.
NARROW_WIDTH = 3.7


def _stack_panels(fig: _MplFigure, size: tuple[float, float], shape: tuple[int, int]) -> None:
    """Move every panel of a grid into one column, each keeping its aspect ratio."""
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    rows, cols = shape
    panel_height = size[1] / rows * NARROW_WIDTH / (size[0] / cols)
    grid = fig.add_gridspec(len(panels), 1)
    for index, ax in enumerate(panels):
        ax.set_subplotspec(grid[index, 0])
        ax.yaxis.set_tick_params(labelleft=True)  # shared axes hid them on inner columns
        ax.xaxis.set_tick_params(labelbottom=True)
    for legend in list(fig.legends):  # a figure-wide legend in rows of 4 would keep it wide
        texts = legend.get_texts()
        legend.remove()
        fig.legend(legend.legend_handles, [t.get_text() for t in texts], loc="outside lower center",
                   ncols=2, fontsize=texts[0].get_fontsize() if texts else None)
    fig.set_size_inches(NARROW_WIDTH, panel_height * len(panels) + 0.4)


def _wrap(name: str, wide: str, narrow: str | None, caption: str) -> str:
    """The ``<figure>``: one SVG, or a wide and a stacked one that CSS picks by width."""
    if narrow is None:
        body = wide
    else:
        body = f'<div class="sdpa-wide">\n{wide}\n</div>\n<div class="sdpa-narrow">\n{narrow}\n</div>'
    return f'<figure class="sdpa-figure" id="fig-{name}">\n{body}\n<figcaption>{caption}</figcaption>\n</figure>\n'


def render_svg(fig: _MplFigure, name: str, *, caption: str, alt: str) -> str:
    """Save ``fig`` as SVG and wrap it in a ``<figure>`` with caption and text alternative."""
    return _wrap(name, _svg(fig, name, alt), None, caption)


def _svg(fig: _MplFigure, name: str, alt: str) -> str:
    """``fig`` as inline SVG: ids prefixed with ``name``, themed colours, labelled."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML declaration and DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<style type=\"text/css\">.*?</style>\s*", "", svg, flags=re.S)
    svg = svg.replace(INK, "currentColor")
    # Lighter pages: coordinates to 0.1 pt (finer than a pixel), in attributes only (never
    # in text), and one path per line.
    svg = re.sub(r'="([^"]*)"', lambda m: '="' + re.sub(r"(\d+\.\d)\d+", r"\1", m.group(1)) + '"', svg)
    svg = re.sub(r" ?\n(?=[MLCQZz] |z)", " ", svg)
    svg = re.sub(r'style="[^"]*"', _themed_palette, svg)
    # Prefix every id (and every reference to one) so that figures never clash on a page.
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{name}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{name}-\1"', svg)
    # Responsive: keep the viewBox, let CSS size it; label it for assistive technology.
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    svg = re.sub(r'(<svg[^>]*?)\s(width|height)="[\d.]+pt"', r"\1", svg, count=1)
    svg = re.sub(r'(<svg[^>]*?)\s(width|height)="[\d.]+pt"', r"\1", svg, count=1)
    max_width = f' style="max-width: {float(width.group(1)) * 4 / 3:.0f}px"' if width else ""
    title_id = f"{name}-title"
    svg = re.sub(
        r"<svg\b",
        f'<svg role="img" aria-labelledby="{title_id}"{max_width}',
        svg,
        count=1,
    )
    svg = svg.replace(">", f'><title id="{title_id}">{html.escape(alt)}</title>', 1)
    return "\n".join(line for line in svg.splitlines() if line.strip())  # no blank lines


def svg_figure(fig: _MplFigure, name: str, *, caption: str, alt: str) -> str:
    """Render a figure built elsewhere (under :data:`STYLE`) to the same captioned SVG."""
    with rc_context({**STYLE, "svg.hashsalt": name}):
        return render_svg(fig, name, caption=caption, alt=alt)


