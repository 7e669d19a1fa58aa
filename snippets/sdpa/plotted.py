"""The numbers a figure plots, read back from its matplotlib artists, as CSV.

:class:`sdpa.figures.Figure` puts :func:`plotted_data` in the page beside the SVG; the
build offers it as the figure's CSV download (``sitebuild/figures.py``), and tests read it.
"""

from __future__ import annotations

import csv
import io

import numpy as np
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Polygon


#: Columns of :func:`plotted_data`. One row per plotted point; ``value`` is the colour
#: value of an image cell or scatter point, the upper edge of a band (``y`` its lower
#: edge) or of an error bar.
CSV_COLUMNS = ("panel", "title", "x_label", "y_label", "series", "kind", "x", "y", "value")


def plotted_data(fig: Figure) -> str:
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
