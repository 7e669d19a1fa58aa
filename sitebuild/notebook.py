"""The lab notebook (``docs/lab.py``, a Jupytext script that mkdocs-jupyter executes).

* Under the snippet cache, mkdocs-jupyter caches the executed notebook in a folder named
  after the cache key of its code (its source and every ``snippets/`` module it imports):
  the plugin's own cache is keyed on the notebook file alone and would miss library edits.
* Jupytext gives cells random ids on every read; :func:`number_cells` numbers them in
  order in the page, so two builds stay byte-identical.
* :func:`write_downloads` puts the notebook beside its page as ``.ipynb`` for readers.
"""

from __future__ import annotations

import re
from pathlib import Path

from sitebuild import cache

CELL_ID = re.compile(r"cell-id=([0-9a-f]{8}(?:-[0-9a-f-]+)?)")


def _notebook_scripts(config) -> list[Path]:
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return []
    found = {path for pattern in plugin.config["include"] for path in Path(config.docs_dir).glob(pattern)}
    return sorted(path for path in found if path.suffix == ".py")


def use_snippet_cache(config, bases: list[Path]) -> None:
    """Let mkdocs-jupyter cache executed notebooks, keyed on their code and the library's."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return
    from sdpa.runtime import device

    sources = "".join(path.read_text() for path in _notebook_scripts(config))
    key = cache.snippet_key(sources, {}, bases, str(device()))
    plugin.config["cache"] = True
    plugin.config["cache_dir"] = str(cache.CACHE_DIR.parent / "notebooks" / key[:16])


def number_cells(page_html: str) -> str:
    """Replace the random notebook cell ids in a page by ``cell-1``, ``cell-2``, ..."""
    ids: dict[str, str] = {}
    return CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids) + 1}"), page_html)


def write_downloads(config) -> None:
    """Beside each notebook page written as a Jupytext script, put the same notebook as
    ``.ipynb`` (cells numbered in order, outputs empty), for readers to download."""
    import jupytext

    for path in _notebook_scripts(config):
        notebook = jupytext.read(path)
        for number, cell in enumerate(notebook.cells, start=1):
            cell["id"] = f"cell-{number}"
        target = Path(config.site_dir) / path.stem / f"{path.stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(notebook, target, fmt="ipynb")
