"""Figures as SVG, with the numbers they plot, for the site's pages.

Use it as a context manager; the HTML is ready in ``.html`` when the block ends::

    fig = Figure("score-spread", caption="...", alt="...", ncols=2)
    with fig as (left, right):
        left.plot(x, y)
    print(fig.html)

Inside the block matplotlib runs under the site's style (``rc_context``), on a
``matplotlib.figure.Figure`` that pyplot never sees, so neither rcParams nor open
figures leak into the next snippet. The output is byte-identical from run to run: the
hash salt is the figure's name and the date is dropped.

The printed ``<figure>`` carries everything the page needs: the SVG as matplotlib wrote
it (text and axes in :data:`INK`, data in :data:`PALETTE` colours, the text alternative
as its ``<title>``: :mod:`sdpa.svg`), a stacked copy for phones when panels sit side by
side (:mod:`sdpa.phone`), the caption, and the numbers that every panel plots as CSV
(:mod:`sdpa.plotted`) in a ``<script type="text/csv">`` data block, which browsers never
show. A figure the reader drives is :func:`sdpa.explorable.explorable`. While the site
builds, ``sitebuild/figures.py`` makes the SVG follow the page's light or dark scheme,
writes ``<name>.svg`` and ``<name>.csv`` beside the page and links them under the
figure.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context  # noqa: E402
from matplotlib.figure import Figure as _MplFigure  # noqa: E402

from sdpa.explorable import explorable  # noqa: E402, F401  (sdpa.figures.explorable, as snippets call it)
from sdpa.phone import stack_panels  # noqa: E402
from sdpa.plotted import plotted_data  # noqa: E402
from sdpa.style import INK, PALETTE, checked_name  # noqa: E402
from sdpa.svg import plain_text_labels, svg, wrap  # noqa: E402

__all__ = ["INK", "PALETTE", "STYLE", "Figure", "explorable", "plotted_data"]

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
    "savefig.bbox": "tight",  # a legend wider than the figure (a phone's stacked copy) stays whole
    "savefig.pad_inches": 0.05,
    "image.interpolation": "nearest",
}


class Figure:
    """One figure of a page: a matplotlib figure in, a captioned SVG and its data out."""

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
        checked_name(name)
        if not caption.strip() or not alt.strip():
            raise ValueError(f"figure {name!r} needs a caption and a text alternative")
        self.name, self.caption, self.alt = name, caption, alt
        self.shape = (nrows, ncols)
        self.size = size or (3.4 * ncols + 0.6, 3.0 * nrows)
        self.subplot_kw = subplot_kw
        self.html = ""
        self.csv = ""
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
                plain_text_labels(self.figure)
                self.csv = plotted_data(self.figure)
                wide = svg(self.figure, self.alt)
                narrow = None
                if self.shape[1] > 1:  # panels side by side: also a stacked layout for phones
                    stack_panels(self.figure, self.size, self.shape)
                    narrow = svg(self.figure, self.alt)
                self.html = wrap(self.name, wide, narrow, self.caption, self.csv)
        finally:
            self.figure = None  # no pyplot registry: dropping the reference frees it
            self._rc.__exit__(exc_type, exc, tb)
            self._rc = None  # (a finished figure is plain data: it pickles)
