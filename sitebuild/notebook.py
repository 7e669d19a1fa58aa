"""The lab notebook (``docs/lab.py``, a Jupytext script that mkdocs-jupyter executes).

It runs with the snippets, into the store (``execute.py``); :func:`read_pages` has the
plugin take its page from there (the plugin's own cache, keyed on the file alone, stays
off). :func:`number_cells` numbers Jupytext's random cell ids, so builds stay
byte-identical; :func:`write_downloads` puts it beside its page as ``.ipynb``, with a first
cell that writes the library next to it: it runs anywhere with torch and matplotlib.
"""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path
from typing import Callable

from sdpa import env
from sitebuild.execute import notebooks

CELL_ID = re.compile(r"cell-id=([0-9a-f]{8}(?:-[0-9a-f-]+)?)")


def read_pages(page: Callable[[str, dict], str]) -> None:
    """Have mkdocs-jupyter's ``convert.nb2html(path, **kwargs)`` give ``page(path, kwargs)``
    (the notebook's page from the store) instead of executing the notebook."""
    from mkdocs_jupyter import convert

    original = inspect.unwrap(convert.nb2html)

    @functools.wraps(original)
    def nb2html(nb_path, **kwargs):
        return page(str(nb_path), kwargs)

    convert.nb2html = nb2html


def number_cells(page_html: str) -> str:
    """Replace the random notebook cell ids in a page by ``cell-1``, ``cell-2``, ..."""
    ids: dict[str, str] = {}
    return CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids) + 1}"), page_html)


LIBRARY_CELL = """\
# The part of the site's library that this notebook imports, as it was when the site was
# built: written to snippets/ next to the notebook (not inside a checkout of the site,
# which has its own), so that the notebook runs anywhere with torch and matplotlib.
from pathlib import Path

LIBRARY = {library}
if not any((folder / "mkdocs.yml").is_file() for folder in (Path.cwd(), Path.cwd().parent)):
    for name, text in LIBRARY.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text)
"""


def library_cell(bases: list[Path]) -> str:
    """A code cell writing the whole library package (``snippets/sdpa/``)."""
    base = next(base for base in bases if (base / env.LIBRARY.name / "__init__.py").is_file())
    files = {f"{base.name}/{path.relative_to(base).as_posix()}": path.read_text()
             for path in (base / env.LIBRARY.name).rglob("*.py")}
    entries = "".join(f"\n    {name!r}: {text!r}," for name, text in sorted(files.items()))
    return LIBRARY_CELL.format(library="{" + entries + "\n}")


def download(path: Path, bases: list[Path]):
    """The notebook page ``path`` (a Jupytext script) as readers download it: a first cell
    carrying its library, cells numbered in order, outputs empty."""
    import jupytext
    import nbformat

    notebook = jupytext.read(path)
    cell = nbformat.v4.new_code_cell(library_cell(bases))
    cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab shows it folded
    notebook.cells.insert(0, cell)
    for number, cell in enumerate(notebook.cells, start=1):
        cell["id"] = f"cell-{number}"
    return notebook


def write_downloads(config, bases: list[Path]) -> None:
    """Beside each notebook page written as a Jupytext script, put its :func:`download` as ``.ipynb``."""
    import jupytext

    for path in (Path(path) for path, _ in notebooks(config).values()):
        target = Path(config.site_dir) / path.stem / f"{path.stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(download(path, bases), target, fmt="ipynb")
