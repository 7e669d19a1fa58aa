"""The small library that every snippet on the site shares.

One place for the device choice, seeding, figure output and Markdown tables, so that
each snippet under ``snippets/<page>/`` reads like a short gallery example.
"""

from sdpa.runtime import device, seed
from sdpa.figures import INK, PALETTE, Figure, svg_figure
from sdpa.tables import markdown_table, fmt

__all__ = ["device", "seed", "Figure", "svg_figure", "INK", "PALETTE", "markdown_table", "fmt"]
