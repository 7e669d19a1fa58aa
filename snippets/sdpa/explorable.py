"""Figures the reader drives: their data as JSON in the page, drawn by
``docs/assets/explorable.js``."""

from __future__ import annotations

import json

from sdpa.style import EXPLORABLE_CLASS, EXPLORABLE_DATA_CLASS, EXPLORABLE_ID_PREFIX, checked_name
from sdpa.tables import caption_html


def explorable(name: str, data: dict, *, caption: str) -> str:
    """A figure the reader drives: ``data`` as JSON in the page, drawn and redrawn by
    ``docs/assets/explorable.js`` (a slider for d_k, a choice of scale rule)."""
    payload = json.dumps(_rounded(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # JSON's own escape: nothing closes the script
    return (f'<figure class="{EXPLORABLE_CLASS}" id="{EXPLORABLE_ID_PREFIX}{checked_name(name)}">\n'
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
