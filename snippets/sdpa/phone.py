"""A figure's layout for phones: panels side by side, stacked in one narrow column.

:class:`sdpa.figures.Figure` draws a figure of several columns twice: as laid out, and
stacked by :func:`stack_panels` (the page's CSS shows one or the other by the window's
width), so that a phone shows every panel at a readable size.
"""

from __future__ import annotations

from matplotlib.figure import Figure

#: Width in inches of a figure's stacked layout: drawn at about its natural size on a
#: phone, so its text stays as large as the page's captions.
NARROW_WIDTH = 3.7


def stack_panels(fig: Figure, size: tuple[float, float], shape: tuple[int, int]) -> None:
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

