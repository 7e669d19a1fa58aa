"""Each snippet's run, kept for the test session: what a build's worker hands back.

The test suite builds the site once, in a fresh process with worker processes
(``tests/conftest.py``), and its claim tests read the data each snippet computed. So that
no snippet runs twice, ``SDPA_KEEP_RUNS=<folder>`` has every worker write, for each page
it runs, one pickle into that folder holding

* for each snippet: what it printed, the global state it left behind (changed rcParams,
  open pyplot figures: :func:`leaks`) and its namespace's data (what pickles: results,
  constants, figures; not modules, functions or classes);
* the results that the library's memos (``sdpa.runtime.memo``) computed for the page,
  with their keys (configuration, seed offset, device, profile).

One pickle per page keeps what the page's snippets share: a snippet's ``result`` and the
memo's entry for it are one object after loading too. It appears whole once the page is
done (:func:`page_file`), so a reader can take each page's runs as they come.
:func:`load_page` reads them back and puts the memo results
into the session's own memos, so that a test calling an experiment a page ran gets that
very result without running it again.

Nothing here runs unless the variable is set; the build's output is the same either way.
A session that builds no site but reads the snippets of several pages runs them in
workers of its own with ``python -m sitebuild.keep --run <folder> [page.md ...]``
(:func:`main`): the same jobs as a build's workers, and no site.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
import types
from pathlib import Path

from sitebuild import LIBRARY_ROOT

DOCS = LIBRARY_ROOT.parent / "docs"

#: Namespace values that are code, not data: left out of what is kept.
CODE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


def _style() -> dict:
    import matplotlib

    return {k: v for k, v in matplotlib.rcParams.items() if not k.startswith("backend")}


def leaks(style_before: dict) -> list[str]:
    """The global state a snippet left behind, given the rcParams from before it ran."""
    import matplotlib.pyplot as plt

    return (["changed rcParams"] if _style() != style_before else []) + (
        ["left pyplot figures open"] if plt.get_fignums() else [])


def memo_tables() -> dict[str, dict]:
    """Every memo of the library loaded here, by ``module:name``: its dict of results
    (``sdpa.runtime.memo`` gives each memoised function a ``cache_clear`` bound to it)."""
    tables = {}
    for name, module in list(sys.modules.items()):
        if name != "sdpa" and not name.startswith("sdpa."):
            continue
        for attribute, value in list(vars(module).items()):
            table = getattr(getattr(value, "cache_clear", None), "__self__", None)
            if isinstance(table, dict) and getattr(value, "__module__", None) == name:
                tables[f"{name}:{attribute}"] = table
    return tables


def _data(namespace: dict) -> dict:
    kept = {}
    for name, value in namespace.items():
        if name.startswith("__") or name == "print" or isinstance(value, CODE):
            continue
        try:
            pickle.dumps(value)
        except Exception:  # noqa: BLE001 - what does not pickle stays behind
            continue
        kept[name] = value
    return kept


def run_and_keep(fences: list[tuple[str, str]], folder: str, run) -> list:
    """``run(code, filename, namespace)`` each fence of one page, then keep the page's
    runs and new memo results in ``folder`` (a worker's job under ``SDPA_KEEP_RUNS``)."""
    known = {name: set(table) for name, table in memo_tables().items()}
    outcomes, runs = [], {}
    for filename, code in fences:
        namespace: dict = {}
        style = _style()
        outcome = run(code, filename, namespace)
        outcomes.append(outcome)
        runs[filename] = {"output": outcome.output, "leaks": leaks(style), "namespace": _data(namespace),
                          "failed": outcome.failure is not None}
    memo = {name: {key: value for key, value in table.items() if key not in known.get(name, ())}
            for name, table in memo_tables().items()}
    path = page_file(folder, fences)
    try:
        data = pickle.dumps({"runs": runs, "memo": {k: v for k, v in memo.items() if v}})
    except Exception:  # noqa: BLE001 - a memo result that does not pickle: keep the runs alone
        data = pickle.dumps({"runs": runs, "memo": {}})
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return outcomes


def page_file(folder: str | Path, fences: list[tuple[str, str]]) -> Path:
    """Where the runs of one page's ``(filename, code)`` fences are kept in ``folder``: it
    appears, whole, once the page's last fence has run."""
    return Path(folder) / f"{fences[0][0].replace('/', '-')}.pickle"


def load_page(path: Path) -> dict[str, dict]:
    """The snippet runs of one page's pickle (by ``snippets/<page>/<name>.py``); its memo
    results are added to this process's memos (an entry already there is kept)."""
    kept = pickle.loads(path.read_bytes())
    for name, results in kept["memo"].items():
        module, attribute = name.split(":")
        table = getattr(importlib.import_module(module), attribute).cache_clear.__self__
        for key, value in results.items():
            table.setdefault(key, value)
    return kept["runs"]


def run_pages(folder: Path, pages: dict[str, list[tuple[str, str]]], jobs: int) -> None:
    """Run each page's fences (a job of :func:`sitebuild.runner.page_jobs`) in ``jobs``
    worker processes, slowest first (as a build's workers do, :mod:`sitebuild.pool`),
    keeping their runs in ``folder``; each page's pickle appears as soon as that page is
    done. A page whose worker died is left out (its reader runs its snippets itself). Its
    seconds go to the build's schedule."""
    from sdpa import env
    from sitebuild import pool, runner

    os.environ[env.KEEP_RUNS] = str(folder)  # before the pool: its workers take this environment
    workers = pool.Pool(jobs)
    order = pool.start_order({page: len(fences) for page, fences in pages.items()}, DOCS)
    futures = {page: workers.submit(runner.run_page, pages[page]) for page in order}
    seconds = {}
    try:
        for page, future in futures.items():
            try:
                seconds[page] = round(sum(outcome.seconds for outcome in future.result()), 3)
            except Exception as error:  # noqa: BLE001 - one page's loss is not the others'
                print(f"docs/{page}: its worker failed ({error!r}); its snippets are not kept", flush=True)
    finally:
        workers.close()
    pool.remember_seconds(seconds, DOCS)


def main(argv: list[str] | None = None) -> None:
    """``python -m sitebuild.keep --run FOLDER [--jobs N] [PAGE.md ...]``: run the executed
    fences of the pages named (by default every page under docs/ that has some) in worker
    processes, keeping every snippet's run in FOLDER, one pickle per page. The test session
    starts this when it runs the snippets of several pages and builds no site
    (``tests/conftest.py``, ``SessionSnippets``)."""
    import argparse

    from sitebuild import runner

    parser = argparse.ArgumentParser(prog="python -m sitebuild.keep", description=main.__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, metavar="FOLDER", help="where the runs are kept")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("pages", nargs="*", help="pages under docs/ (default: every page with executed fences)")
    args = parser.parse_args(argv)
    names = args.pages or sorted(str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md"))
    markdown = {name: (DOCS / name).read_text(encoding="utf-8") for name in names}
    pages = {name: fences for name in names if (fences := runner.whole_file_fences(markdown[name], [LIBRARY_ROOT]))}
    args.run.mkdir(parents=True, exist_ok=True)
    run_pages(args.run, runner.page_jobs(pages, markdown)[0], args.jobs)  # as the build groups them


if __name__ == "__main__":
    main()
