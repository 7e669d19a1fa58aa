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
memo's entry for it are one object after loading too. :func:`load` reads a folder back
and puts the memo results into the session's own memos, so that a test calling an
experiment a page ran gets that very result without running it again.

Nothing here runs unless the variable is set; the build's output is the same either way.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import types
from pathlib import Path

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
    path = Path(folder) / f"{fences[0][0].replace('/', '-')}.pickle"
    try:
        data = pickle.dumps({"runs": runs, "memo": {k: v for k, v in memo.items() if v}})
    except Exception:  # noqa: BLE001 - a memo result that does not pickle: keep the runs alone
        data = pickle.dumps({"runs": runs, "memo": {}})
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return outcomes


def load(folder: Path) -> dict[str, dict]:
    """Every snippet run kept in ``folder`` (by ``snippets/<page>/<name>.py``); the memo
    results are added to this process's memos (an entry already there is kept)."""
    runs: dict[str, dict] = {}
    for path in sorted(Path(folder).glob("*.pickle")):
        kept = pickle.loads(path.read_bytes())
        for name, results in kept["memo"].items():
            module, attribute = name.split(":")
            table = getattr(importlib.import_module(module), attribute).cache_clear.__self__
            for key, value in results.items():
                table.setdefault(key, value)
        runs.update(kept["runs"])
    return runs
