"""Each snippet's run, kept for the test session: what a build's worker hands back.

The test session (``tests/harness.py``) reads the data each snippet computed, and no
snippet may run twice. So ``SDPA_KEEP_RUNS=<folder>`` has every worker of a build write,
for each page it runs (:func:`keep_page`, the job the build's hooks give the workers under
that variable: :func:`page_job`), one pickle into that folder holding

* for each snippet: what it printed, the global state it left behind (changed rcParams,
  open pyplot figures: :func:`leaks`), its namespace less its imports (results,
  constants, figures, and the functions and classes it defines, written by value with
  cloudpickle, since a snippet's module is gone once it has run) and, if it failed, where;
* the results of the library's memos (``sdpa.runtime.memo``) that the page's snippets
  read, with their keys (configuration and run context), and which of them the page
  computed (the others a page before it did, in the same worker).

One pickle per page keeps what the page's snippets share: a snippet's ``result`` and the
memo's entry for it are one object after loading too. It appears whole once the page is
done (:func:`page_file`), so a reader can take each page's runs as they come
(:func:`read_page`).

Nothing here runs unless the variable is set; the build's output is the same either way.
A session that builds no site but reads the snippets of several pages runs them in
workers of its own with ``python -m sitebuild.keep --run <folder> [page.md ...]``
(:func:`main`): the same jobs as a build's workers, and no site. This module uses the
runner (:mod:`sitebuild.runner`); the runner knows nothing of it.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import types
from pathlib import Path

import cloudpickle

from sdpa import env
from sitebuild import LIBRARY_ROOT, pool, runner

DOCS = LIBRARY_ROOT.parent / "docs"


def style() -> dict:
    import matplotlib

    return {k: v for k, v in matplotlib.rcParams.items() if not k.startswith("backend")}


def leaks(style_before: dict) -> list[str]:
    """The global state a snippet left behind, given the rcParams from before it ran."""
    import matplotlib.pyplot as plt

    return (["changed rcParams"] if style() != style_before else []) + (
        ["left pyplot figures open"] if plt.get_fignums() else [])


def memo_tables() -> dict[str, dict]:
    """Every memo of the library loaded here, by ``module:name``: its dict of results
    (``sdpa.runtime.memo`` gives each memoised function its ``results``)."""
    tables = {}
    for name, module in list(sys.modules.items()):
        if name != "sdpa" and not name.startswith("sdpa."):
            continue
        for attribute, value in list(vars(module).items()):
            table = getattr(value, "results", None)
            if isinstance(table, dict) and getattr(value, "__wrapped__", None) and value.__module__ == name:
                tables[f"{name}:{attribute}"] = table
    return tables


def memo_table(name: str) -> dict:
    """The results of the memo ``module:name`` (its module imported here if need be)."""
    module, attribute = name.split(":")
    return getattr(importlib.import_module(module), attribute).results


def _data(namespace: dict) -> dict:
    """A snippet's namespace less its imports: what cloudpickle can write (the classes and
    functions a snippet defines, by value: their module is gone once the snippet has run)."""
    kept = {}
    for name, value in namespace.items():
        if name.startswith("__") or name == "print" or isinstance(value, types.ModuleType):
            continue
        try:
            cloudpickle.dumps(value)
        except Exception:  # noqa: BLE001 - what does not pickle stays behind (a reader asking for it fails)
            continue
        kept[name] = value
    return kept


def run_and_keep(fences: list[tuple[str, str]], folder: str, run) -> list:
    """``run(code, filename, namespace)`` each fence of one page, then keep the page's
    runs and the memo results it read in ``folder`` (a worker's job under ``SDPA_KEEP_RUNS``)."""
    known = {name: set(table.computed) for name, table in memo_tables().items()}
    for table in memo_tables().values():
        table.read.clear()
    outcomes, runs = [], {}
    for filename, code in fences:
        namespace: dict = {}
        before = style()
        outcome = run(code, filename, namespace)
        outcomes.append(outcome)
        runs[filename] = {"output": outcome.output, "leaks": leaks(before), "namespace": _data(namespace),
                          "failure": outcome.failure}
    tables = {name: table for name, table in memo_tables().items() if table.read}
    memo = {name: {key: dict.__getitem__(table, key) for key in table.read} for name, table in tables.items()}
    # the engines' runs (the shared memos, which hold the compute) this page computed here,
    # not loaded from another process; the studies that assemble them are cheap, and every
    # process that reads one assembles it
    computed = {name: [key for key in table.computed if key not in known.get(name, ())]
                for name, table in memo_tables().items() if table.shared}
    computed = {name: keys for name, keys in computed.items() if keys}
    path = page_file(folder, fences)
    try:
        data = cloudpickle.dumps({"runs": runs, "memo": memo, "computed": computed})
    except Exception:  # noqa: BLE001 - a memo result that does not pickle: keep the runs alone
        data = cloudpickle.dumps({"runs": runs, "memo": {}, "computed": computed})
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return outcomes


def keep_page(fences: list[tuple[str, str]]) -> list:
    """A worker's job under ``SDPA_KEEP_RUNS``: :func:`sitebuild.runner.run_page`, each run kept."""
    return run_and_keep(fences, str(env.keep_runs()), runner.run)


def page_job():
    """The job a build's workers run for each page: :func:`keep_page` under
    ``SDPA_KEEP_RUNS``, else :func:`sitebuild.runner.run_page`."""
    return keep_page if env.keep_runs() else runner.run_page


def page_file(folder: str | Path, fences: list[tuple[str, str]]) -> Path:
    """Where the runs of one page's ``(filename, code)`` fences are kept in ``folder``: it
    appears, whole, once the page's last fence has run."""
    return Path(folder) / f"{fences[0][0].replace('/', '-')}.pickle"


def read_page(path: Path) -> dict[str, dict]:
    """One page's pickle: ``{"runs": {snippets/<page>/<name>.py: run}, "memo": {module:name:
    {key: result}}, "computed": {module:name: [key, ...]}}`` (the memo results the page read,
    and which of them it computed)."""
    return pickle.loads(path.read_bytes())


def run_pages(folder: Path, pages: dict[str, list[tuple[str, str]]], jobs: int, docs: Path = DOCS) -> None:
    """Run each page's fences (a job of :func:`sitebuild.runner.page_jobs`) in ``jobs``
    worker processes, slowest first (as a build's workers do, :mod:`sitebuild.pool`),
    keeping their runs in ``folder``; each page's pickle appears as soon as that page is
    done. A page whose worker died is left out (its reader fails, saying so). Its seconds
    go to the build's schedule of ``docs``."""
    env.export(**{env.KEEP_RUNS: str(folder)})  # before the pool: its workers take this environment
    workers = pool.Pool(jobs, pool.preload(code for fences in pages.values() for _, code in fences))
    order = pool.start_order({page: len(fences) for page, fences in pages.items()}, docs)
    futures = {page: workers.submit(keep_page, pages[page]) for page in order}
    seconds = {}
    try:
        for page, future in futures.items():
            try:
                seconds[page] = round(sum(outcome.seconds for outcome in future.result()), 3)
            except Exception as error:  # noqa: BLE001 - one page's loss is not the others'
                print(f"docs/{page}: its worker failed ({error!r}); its snippets are not kept", flush=True)
    finally:
        workers.close()
    pool.remember_seconds(seconds, docs)


def main(argv: list[str] | None = None) -> None:
    """``python -m sitebuild.keep --run FOLDER [--jobs N] [PAGE.md ...]``: run the executed
    fences of the pages named (by default every page under docs/ that has some) in worker
    processes, keeping every snippet's run in FOLDER, one pickle per page. The test session
    starts this when it runs the snippets of several pages and builds no site
    (``tests/harness.py``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m sitebuild.keep", description=main.__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, metavar="FOLDER", help="where the runs are kept")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the pages' folder (default: docs/)")
    parser.add_argument("--snippets", type=Path, default=LIBRARY_ROOT, help="the includes' folder (snippets/)")
    parser.add_argument("pages", nargs="*", help="pages under docs/ (default: every page with executed fences)")
    args = parser.parse_args(argv)
    names = args.pages or sorted(str(page.relative_to(args.docs)) for page in args.docs.rglob("*.md"))
    markdown = {name: (args.docs / name).read_text(encoding="utf-8") for name in names}
    pages = {name: fences for name in names
             if (fences := runner.whole_file_fences(markdown[name], [args.snippets.resolve()]))}
    args.run.mkdir(parents=True, exist_ok=True)
    run_pages(args.run, runner.page_jobs(pages, markdown)[0], args.jobs, args.docs)  # as the build groups them


if __name__ == "__main__":
    main()
