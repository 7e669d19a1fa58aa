"""The lab notebook (``docs/lab.py``, a Jupytext script that mkdocs-jupyter executes).

* Under the snippet cache, mkdocs-jupyter caches the executed notebook in a folder named
  after the cache key of its code (its source and the library, as for a snippet): the
  plugin's own cache is keyed on the notebook file alone and would miss library edits.
* Jupytext gives cells random ids on every read; :func:`number_cells` numbers them in
  order in the page, so two builds stay byte-identical.
* :func:`use_ipc_kernel` has mkdocs-jupyter talk to the notebook's kernel over local IPC
  sockets instead of TCP on 127.0.0.1, so the kernel does not warn that "Kernel is running
  over TCP without encryption" on every build (IPC is what that warning recommends).
* :func:`time_conversions` routes mkdocs-jupyter's conversion of each notebook (its
  execution, the slow part) through this module: timed for the build report, and taken
  from a worker of :mod:`sitebuild.pool` that ran the same conversion, with the same
  arguments, ahead of the pages (:func:`plan`, :func:`run_ahead`). Anything else (no
  worker, other arguments, a failing cell) converts here, as mkdocs-jupyter would.
* :func:`write_downloads` puts the notebook beside its page as ``.ipynb`` for readers,
  with a first cell that writes the library (its text read from ``snippets/`` as the site
  builds) into ``snippets/sdpa/`` next to it: the download runs in an empty folder with
  only ``pip install torch matplotlib``.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import time
from concurrent.futures import Future
from pathlib import Path

from sdpa import env
from sitebuild import cache

CELL_ID = re.compile(r"cell-id=([0-9a-f]{8}(?:-[0-9a-f-]+)?)")


def _notebook_scripts(config) -> list[Path]:
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return []
    found = {path for pattern in plugin.config["include"] for path in Path(config.docs_dir).glob(pattern)}
    return sorted(path for path in found if path.suffix == ".py")


#: The packages that execute a notebook and write its page (their versions are in its cache key).
CONVERTING = ("mkdocs-jupyter", "nbconvert", "nbclient", "ipykernel", "jupytext")
JUPYTER_CONFIG = Path(__file__).with_name("jupyter")  # jupyter_nbconvert_config.json


def use_ipc_kernel() -> None:
    """Add ``sitebuild/jupyter/`` to Jupyter's config path: its nbconvert config (which
    mkdocs-jupyter loads) sets ``KernelManager.transport = "ipc"``."""
    env.prepend_path("JUPYTER_CONFIG_PATH", str(JUPYTER_CONFIG))


def use_snippet_cache(config, bases: list[Path]) -> None:
    """Let mkdocs-jupyter cache executed notebooks, keyed on their code, the library and
    the plugin's settings, as a snippet is (:func:`sitebuild.cache.snippet_key`)."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return
    sources = "".join(path.read_text() for path in _notebook_scripts(config))
    settings = {name: value for name, value in plugin.config.items() if name not in ("cache", "cache_dir")}
    key = cache.snippet_key(sources, settings, cache.library_digest(bases), cache.device(),
                            repr(cache.versions(CONVERTING)))
    plugin.config["cache"] = True
    plugin.config["cache_dir"] = str(cache.CACHE_DIR.parent / "notebooks" / key[:16])


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
    files = {}
    for path in cache.library_files(bases):
        base = next(base for base in bases if path.is_relative_to(base))
        files[f"{base.name}/{path.relative_to(base).as_posix()}"] = path.read_text()
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

    for path in _notebook_scripts(config):
        target = Path(config.site_dir) / path.stem / f"{path.stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(download(path, bases), target, fmt="ipynb")


# ---- executing the notebook: timed, and run ahead in a worker -------------------------

_ahead: dict[str, Future] = {}  # a conversion running in a worker, by its arguments
_finished: list[tuple[str, float, str]] = []  # (notebook path, seconds, "worker" or "here")


def _arguments(path: str, kwargs: dict) -> str:
    return repr((os.path.normpath(path), sorted(kwargs.items())))


def time_conversions() -> None:
    """Have mkdocs-jupyter's ``convert.nb2html`` go through :func:`_converted` (once per process)."""
    from mkdocs_jupyter import convert

    if hasattr(convert.nb2html, "__wrapped__"):
        return

    @functools.wraps(convert.nb2html)
    def nb2html(nb_path, **kwargs):
        return _converted(str(nb_path), kwargs)

    convert.nb2html = nb2html


def plan(config) -> dict[str, tuple[str, dict]]:
    """This build's notebook pages that mkdocs-jupyter will execute, each mapped to the
    arguments of its conversion (the last build's are forgotten)."""
    _ahead.clear()
    _finished.clear()
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config["execute"]:
        return {}
    if plugin.config["cache"] and any(Path(plugin.config["cache_dir"]).glob("*.json")):
        return {}  # served from mkdocs-jupyter's cache (mkdocs serve): nothing to run
    from mkdocs_jupyter import convert

    parameters = inspect.signature(inspect.unwrap(convert.nb2html)).parameters
    kwargs = {name: plugin.config[name] for name in parameters if name in plugin.config}
    docs = Path(config.docs_dir)
    return {path.relative_to(docs).as_posix(): (str(path), kwargs) for path in _notebook_scripts(config)}


def to_html(path: str, kwargs: dict) -> tuple[str, float]:
    """mkdocs-jupyter's own conversion of one notebook (executed), and its seconds."""
    from mkdocs_jupyter import convert

    start = time.perf_counter()
    page = inspect.unwrap(convert.nb2html)(path, **kwargs)
    return page, round(time.perf_counter() - start, 3)


def run_ahead(arguments: tuple[str, dict], future: Future) -> None:
    """A worker runs ``to_html(*arguments)``: the page's conversion will take its result."""
    _ahead[_arguments(*arguments)] = future


def _converted(path: str, kwargs: dict) -> str:
    future, result, where = _ahead.pop(_arguments(path, kwargs), None), None, "worker"
    if future is not None:
        try:
            result = future.result()
        except Exception:  # noqa: BLE001 - a worker that died, or a failing cell: it fails here as it should
            result = None
    if result is None:
        result, where = to_html(path, kwargs), "here"
    _finished.append((path, result[1], where))
    return result[0]


def finished(config) -> list[tuple[str, float, str]]:
    """This build's notebook conversions: (page, seconds, where it ran)."""
    docs = Path(config.docs_dir)
    return [(Path(path).relative_to(docs).as_posix(), seconds, where) for path, seconds, where in _finished]
