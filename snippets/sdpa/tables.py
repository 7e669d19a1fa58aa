"""Markdown tables from plain rows, and one number formatter for every page."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

_BARE_LT = re.compile(r"<(?![A-Za-z/!])")
_BARE_AMP = re.compile(r"&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);)")


def caption_html(text: str) -> str:
    """A caption as HTML: tags such as ``<code>`` pass; a ``<`` or ``&`` that starts no
    tag or entity is escaped (``P(|z| < 1)`` stays valid HTML)."""
    return _BARE_LT.sub("&lt;", _BARE_AMP.sub("&amp;", text))


def fmt(value: object, digits: int = 3) -> str:
    """Format a number for a table: ``digits`` significant figures, no float noise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value != 0 and (abs(value) >= 10 ** (digits + 3) or abs(value) < 10 ** -(digits)):
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa} × 10<sup>{int(exponent)}</sup>"
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"


def _cell(value: object, digits: int) -> str:
    """One table cell: a ``|`` outside code spans is escaped, so it cannot split the row."""
    parts = fmt(value, digits).split("`")
    return "`".join(part if i % 2 else part.replace("|", "\\|") for i, part in enumerate(parts))


def markdown_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    align: str | None = None,
    digits: int = 3,
    caption: str | None = None,
) -> str:
    """A Markdown table. ``align`` is one letter per column: l, c or r (numbers: r)."""
    headers = [_cell(header, digits) for header in headers]
    rows = [[_cell(cell, digits) for cell in row] for row in rows]
    align = align or "l" + "r" * (len(headers) - 1)
    if len(align) != len(headers) or any(len(row) != len(headers) for row in rows):
        raise ValueError("every row and the alignment need one entry per header")
    rule = {"l": ":--", "c": ":-:", "r": "--:"}
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join(rule[a] for a in align) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    table = "\n".join(lines) + "\n"
    if caption:
        table = f"{table}\n<p class=\"sdpa-caption\">{caption_html(caption)}</p>\n"
    return table
