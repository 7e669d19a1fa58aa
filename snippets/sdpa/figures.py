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
as its ``<title>``), a stacked copy for phones when panels sit side by side, the
caption, and the numbers that every panel plots as CSV (:func:`plotted_data`) in a
``<script type="text/csv">`` data block, which browsers never show. While the site
builds, ``sitebuild/figures.py`` makes the SVG follow the page's light or dark scheme,
writes ``<name>.svg`` and ``<name>.csv`` beside the page and links them under the
figure.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")

from matplotlib import rc_context  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection, PolyCollection  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402
from matplotlib.figure import Figure as _MplFigure  # noqa: E402
from matplotlib.patches import Polygon  # noqa: E402
from matplotlib.ticker import Formatter, LogFormatterMathtext  # noqa: E402

from sdpa.style import (DATA_CLASS, EXPLORABLE_CLASS, EXPLORABLE_DATA_CLASS,  # noqa: E402
                        EXPLORABLE_ID_PREFIX, FIGURE_CLASS, FIGURE_ID_PREFIX, INK, NARROW_CLASS,
                        PALETTE, WIDE_CLASS)
from sdpa.tables import caption_html  # noqa: E402

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

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")


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
        if not _SLUG.match(name):
            raise ValueError(f"figure name {name!r}: use lowercase letters, digits and '-'")
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
                _plain_text_labels(self.figure)
                self.csv = plotted_data(self.figure)
                wide = _svg(self.figure, self.alt)
                narrow = None
                if self.shape[1] > 1:  # panels side by side: also a stacked layout for phones
                    _stack_panels(self.figure, self.size, self.shape)
                    narrow = _svg(self.figure, self.alt)
                self.html = _wrap(self.name, wide, narrow, self.caption, self.csv)
        finally:
            self.figure = None  # no pyplot registry: dropping the reference frees it
            self._rc.__exit__(exc_type, exc, tb)
            self._rc = None  # (a finished figure is plain data: it pickles)


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


def _plain_text_labels(fig: _MplFigure) -> None:
    """Every log axis of ``fig`` labelled in plain text (:class:`_PlainText`)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_formatter(), LogFormatterMathtext):
                axis.set_major_formatter(_PlainText(axis.get_major_formatter()))
            if isinstance(axis.get_minor_formatter(), LogFormatterMathtext):
                axis.set_minor_formatter(_PlainText(axis.get_minor_formatter()))


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
        fig.legend(legend.legend_handles, [t.get_text() for t in texts],
                   loc="outside lower center", ncols=2,
                   fontsize=texts[0].get_fontsize() if texts else None)
    fig.set_size_inches(NARROW_WIDTH, panel_height * len(panels) + 0.4)


def _wrap(name: str, wide: str, narrow: str | None, caption: str, data: str) -> str:
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


def _svg(fig: _MplFigure, alt: str) -> str:
    """``fig`` as an SVG element, labelled by its text alternative, with no blank line
    (a blank line would end the HTML block in Markdown)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML declaration and DOCTYPE
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<svg\b", '<svg role="img" aria-labelledby="title"', svg, count=1)
    svg = svg.replace(">", f'><title id="title">{html.escape(alt)}</title>', 1)
    return "\n".join(line for line in svg.splitlines() if line.strip())


# ---- explorable figures ------------------------------------------------------------------


def explorable(name: str, data: dict, *, caption: str) -> str:
    """A figure the reader drives: ``data`` as JSON in the page, drawn and redrawn by
    ``docs/assets/explorable.js`` (a slider for d_k, a choice of scale rule)."""
    if not _SLUG.match(name):
        raise ValueError(f"figure name {name!r}: use lowercase letters, digits and '-'")
    payload = json.dumps(_rounded(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # JSON's own escape: nothing closes the script
    return (f'<figure class="{EXPLORABLE_CLASS}" id="{EXPLORABLE_ID_PREFIX}{name}">\n'
            '<div class="sdpa-explorable-body"><noscript>This figure needs JavaScript; the '
            'table below holds its numbers.</noscript>'
            f'<script type="application/json" class="{EXPLORABLE_DATA_CLASS}">'
            f'{payload}</script></div>\n'
            f'<figcaption>{caption_html(caption)}</figcaption>\n</figure>\n')


def _rounded(value):
    """Floats to 5 significant digits (the page shows 2 or 3): a light, stable payload."""
    if isinstance(value, float):
        return float(f"{value:.5g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(item) for item in value]
    return value


# ---- the numbers a figure plots ---------------------------------------------------------

#: Columns of :func:`plotted_data`. One row per plotted point; ``value`` is the colour
#: value of an image cell or scatter point, the upper edge of a band (``y`` its lower
#: edge) or of an error bar.
CSV_COLUMNS = ("panel", "title", "x_label", "y_label", "series", "kind", "x", "y", "value")


def plotted_data(fig: _MplFigure) -> str:
    """Every number the panels of ``fig`` plot, as CSV (:data:`CSV_COLUMNS`).

    Read from the matplotlib artists themselves, in data coordinates: lines, scatter
    points, bars, histogram outlines, bands (``fill_between``), error bars and images.
    A series is named by its legend label, or by its container's (bars, error bars).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    for number, ax in enumerate(panels, start=1):
        head = [number, ax.get_title() or ax.get_title("left"), ax.get_xlabel(), ax.get_ylabel()]
        for series, kind, x, y, value in _panel_rows(ax):
            writer.writerow([*head, series, kind, _number(x), _number(y), _number(value)])
    return out.getvalue()


def _number(value) -> str:
    if value is None or value is np.ma.masked:
        return ""
    return format(float(value), ".9g")  # float32 exactly, float64 far past any plot's precision


def _panel_rows(ax):
    """(series, kind, x, y, value) for every plotted point of one panel."""
    owner = {}  # artist -> the container (bars, error bars) that names it
    for container in ax.containers:
        for artist in _flatten(container):
            owner[id(artist)] = container
    series = _namer(owner)
    caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer)
            for cap in c.lines[1]}
    for line in ax.lines:
        if id(line) in caps:
            continue  # an error bar's end caps: its "error bar" rows hold their numbers
        for x, y in _data_xy(line, ax, line.get_xydata()):
            yield series(line), "line", x, y, None
    for collection in ax.collections:
        if isinstance(collection, PathCollection):  # scatter
            values = collection.get_array()
            offsets = _data_xy(collection, ax, collection.get_offsets(), offset=True)
            for index, (x, y) in enumerate(offsets):
                value = None if values is None or values.size <= index else values[index]
                yield series(collection), "point", x, y, value
        elif isinstance(collection, LineCollection):  # error bars, vlines, hlines
            for segment in collection.get_segments():
                points = _data_xy(collection, ax, segment)
                if len(points) == 2 and points[0][0] == points[1][0]:
                    low, high = sorted((points[0][1], points[1][1]))
                    yield series(collection), "error bar", points[0][0], low, high
                else:
                    for x, y in points:
                        yield series(collection), "segment", x, y, None
        elif isinstance(collection, PolyCollection):  # fill_between bands
            for path in collection.get_paths():
                for x, low, high in _band(_data_xy(collection, ax, path.vertices)):
                    yield series(collection), "band", x, low, high
    for container in ax.containers:
        if isinstance(container, BarContainer):
            for bar in container.patches:
                yield series(bar), "bar", bar.get_x() + bar.get_width() / 2, bar.get_height(), None
    for patch in ax.patches:
        if isinstance(patch, Polygon) and id(patch) not in owner:  # histtype="step" outlines
            points = _data_xy(patch, ax, patch.get_xy())
            for index, (x, y) in enumerate(points):
                if index == 0 or (x, y) != points[index - 1]:
                    yield series(patch), "outline", x, y, None
    for image in ax.images:
        cells = np.ma.asarray(image.get_array())
        if cells.ndim != 2:
            continue  # an RGB picture, not numbers
        left, right, bottom, top = image.get_extent()
        rows, cols = cells.shape
        xs = left + (np.arange(cols) + 0.5) * (right - left) / cols
        ys = top + (np.arange(rows) + 0.5) * (bottom - top) / rows  # row 0 at the top
        for row in range(rows):
            for col in range(cols):
                yield series(image), "image", xs[col], ys[row], cells[row, col]


def _flatten(container):
    for item in container:
        if isinstance(item, (tuple, list)):
            yield from item
        elif item is not None:
            yield item


def _namer(owner: dict):
    def name(artist) -> str:
        label = artist.get_label() or ""
        if label.startswith("_") and id(artist) in owner:
            label = owner[id(artist)].get_label() or ""
        return "" if label.startswith("_") else label

    return name


def _data_xy(artist, ax, points, *, offset: bool = False) -> list[tuple[float, float]]:
    """``points`` given in the artist's coordinates, in the panel's data coordinates
    (a horizontal line drawn with ``axhline`` spans the x-axis's limits)."""
    points = np.ma.filled(np.ma.asarray(points, dtype=float), np.nan).reshape(-1, 2)
    transform = artist.get_offset_transform() if offset else artist.get_transform()
    if transform != ax.transData:
        points = (transform - ax.transData).transform(points)
    return [(float(x), float(y)) for x, y in points]


def _band(points: list[tuple[float, float]]) -> list[tuple[float, float, float]]:
    """A ``fill_between`` polygon as (x, lower, upper), one row per x."""
    edges: dict[float, list[float]] = {}
    for x, y in points:
        edges.setdefault(x, []).append(y)
    return [(x, min(ys), max(ys)) for x, ys in sorted(edges.items())]
