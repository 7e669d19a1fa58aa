"""The figures' colours and the markup of a printed figure: what the library and the build share.

:mod:`sdpa.figures` draws with these colours and writes this markup; ``sitebuild``
(figure theming, the build report) reads them from here, a module that imports neither
torch nor matplotlib, so that the MkDocs process of a parallel build never loads them.

A printed figure is::

    <figure class="sdpa-figure" id="fig-NAME">
    <svg ...>...</svg>                     (or a wide and a narrow one, each in a <div>)
    <figcaption>...</figcaption>
    <script type="text/csv" class="sdpa-figure-data">...the plotted numbers...</script>
    </figure>

and an explorable one (drawn in the browser by ``docs/assets/explorable.js``)::

    <figure class="sdpa-explorable" id="explore-NAME"> ...
    <script type="application/json" class="sdpa-explorable-data">...</script> ... </figure>
"""

import re

#: A figure's name (its id on the page, its download's file name): lowercase letters,
#: digits and ``-``.
NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def checked_name(name: str) -> str:
    """``name`` if it is a figure's name (:data:`NAME`), else ValueError."""
    if not NAME.match(name):
        raise ValueError(f"figure name {name!r}: use lowercase letters, digits and '-'")
    return name


#: Colour of text, axes and ticks; the site swaps it for ``currentColor`` so that the
#: figure takes the page's foreground colour in light and in dark mode.
INK = "#010203"

#: Data colours chosen to read on both the white and the slate background.
PALETTE = ["#4c8fe0", "#f0913a", "#3fb27f", "#e15759", "#b07cc6", "#c9a227", "#6bc4d6", "#9a9a9a"]

#: The class of a figure's ``<figure>``; its id is ``FIGURE_ID_PREFIX`` + the figure's name.
FIGURE_CLASS = "sdpa-figure"
FIGURE_ID_PREFIX = "fig-"
#: The class of the ``<script type="text/csv">`` block holding the plotted numbers.
DATA_CLASS = "sdpa-figure-data"
#: The classes of the wide layout and of the stacked copy for phones.
WIDE_CLASS, NARROW_CLASS = "sdpa-wide", "sdpa-narrow"
#: An explorable figure's ``<figure>`` class, id prefix and data block class.
EXPLORABLE_CLASS = "sdpa-explorable"
EXPLORABLE_ID_PREFIX = "explore-"
EXPLORABLE_DATA_CLASS = "sdpa-explorable-data"
