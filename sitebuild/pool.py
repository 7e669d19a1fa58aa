"""Worker processes that run a build's snippets and notebook ahead of its pages.

Pages are independent. At the start of a build (``on_files``) the runner makes one job
per page, holding the page's executed fences in order (one worker runs them one after
another, so they share the experiments that ``sdpa`` memoises), and one job per notebook
page; :class:`Pool` starts the slowest first. While the workers run, MkDocs reads and
renders the pages in its own order, and each fence takes its finished outcome instead of
running: the HTML is still made in the MkDocs process, by the same code as in a serial
build, so the site is byte for byte the same.

* ``SDPA_JOBS`` sets the number of worker processes; by default, the CPU cores this
  process may use. ``SDPA_JOBS=1`` runs every snippet in the MkDocs process, one after
  another, as does a build with fewer than two jobs to share (a one-page preview).
* Workers are forked from a ``forkserver``: a fresh interpreter that has imported the
  heavy modules the build's snippets use (torch, numpy, matplotlib: :func:`preload`) and
  run nothing (no thread or state of the MkDocs process travels). Each worker takes the
  MkDocs process's environment as the pool starts, so ``sdpa.runtime`` gives it the
  same device, thread count and seed offset; it imports the snippets' library itself, so
  ``mkdocs serve`` workers see every edit.
* The slowest jobs start first (:func:`start_order`): slowest by the seconds each page
  and notebook took in the last build of its docs folder from this checkout
  (``.cache/schedule.json``, written by every build; it orders the work and nothing else).
"""

from __future__ import annotations

import ast
import ctypes
import json
import multiprocessing
import os
import select
import signal
import sys
import tempfile
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from sdpa import env

#: Imported once by the forkserver, so that each worker starts without paying for them.
PRELOAD = ["numpy", "torch", "matplotlib"]


def preload(sources: Iterable[str]) -> list[str]:
    """The modules of :data:`PRELOAD` that the snippets' ``sources`` import, directly or
    through the library (``sdpa`` uses all three): the site's snippets need every one,
    while a throwaway site of the tests, whose snippets import none, starts its workers
    without a second of imports."""
    imported = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # the worker reports it; preload as for any snippet
            return list(PRELOAD)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.partition(".")[0])
    return list(PRELOAD) if "sdpa" in imported else [name for name in PRELOAD if name in imported]


SCHEDULE = Path(".cache") / "schedule.json"


def workers() -> int:
    """``SDPA_JOBS``, or the number of CPU cores this process may run on."""
    if env.jobs():
        return env.jobs()
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


PR_SET_PDEATHSIG = 1  # prctl(2)


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process (SIGKILL) as soon as its parent, ``parent`` (its
    pid before the fork), ends, however it ends: Linux's ``PR_SET_PDEATHSIG``, a no-op
    elsewhere. The test session starts every process with it (``tests/harness.py``)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # it ended before this process could ask
        os._exit(1)


def die_with(owner: int) -> None:
    """End this process as soon as the process ``owner`` ends: a worker's owner is the
    process that made the pool, not its parent (the forkserver, which lives until its last
    worker ends). A thread waits on the owner's pidfd (Linux 5.3 or later; elsewhere this
    does nothing), so a build or a test session that is killed leaves no worker behind."""
    try:
        pidfd = os.pidfd_open(owner)
    except ProcessLookupError:  # it has ended already
        os._exit(1)
    except (AttributeError, OSError):
        return

    def wait() -> None:
        select.select([pidfd], [], [])
        os._exit(1)

    threading.Thread(target=wait, name=f"ends with {owner}", daemon=True).start()


def _enter(environment: dict[str, str], owner: int) -> None:
    """A worker's first act: end with the process that made the pool, and take its environment."""
    die_with(owner)
    env.replace(environment)


class Pool:
    """The worker processes of one build."""

    def __init__(self, size: int, modules: list[str] = PRELOAD):
        # Workers import this package by name; MkDocs puts the folder that holds it on the
        # path only while it loads a hook, then takes it off again.
        root = str(Path(__file__).resolve().parents[1])
        if root not in sys.path:
            sys.path.append(root)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(modules)
        # the workers share their memoised experiments through a folder of this build's
        # (or of the test session's, when it gave one): no experiment runs twice, and a
        # long one that two pages ask for is split between their workers (sdpa.runtime)
        self._memo = None if env.shared_memo() else tempfile.TemporaryDirectory(prefix="sdpa-memo-")
        changes = {env.SHARED_MEMO: self._memo.name} if self._memo else {}
        self._executor = ProcessPoolExecutor(size, mp_context=context, initializer=_enter,
                                             initargs=(env.environment(changes), os.getpid()))

    def submit(self, function: Callable, *args) -> Future:
        return self._executor.submit(function, *args)

    def close(self, *, failed: bool = False) -> None:
        """Wait for the workers to end; after a failed build, stop them at once."""
        if failed:  # the build has failed: the other pages' results are not needed
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                process.terminate()
        self._executor.shutdown(wait=True, cancel_futures=failed)
        if self._memo is not None:
            self._memo.cleanup()


def _schedule() -> dict[str, dict[str, float]]:
    """The schedule file: for each docs folder built from this checkout (the site's, and
    the throwaway sites the tests build), the seconds of each of its pages."""
    try:
        kept = json.loads(SCHEDULE.read_text())
    except (OSError, ValueError):
        return {}
    return {folder: pages for folder, pages in kept.items() if isinstance(pages, dict)}


def last_seconds(docs: str | Path) -> dict[str, float]:
    """The seconds each page of ``docs`` (its snippets, or a notebook) took in its last build."""
    return _schedule().get(str(Path(docs).resolve()), {})


def remember_seconds(seconds: dict[str, float], docs: str | Path) -> None:
    """Keep this build's seconds per page of ``docs`` for its next build's order (other
    pages kept; folders that are gone, such as a test's throwaway site, forgotten)."""
    if not seconds:
        return
    SCHEDULE.parent.mkdir(parents=True, exist_ok=True)
    kept = {folder: pages for folder, pages in _schedule().items() if Path(folder).is_dir()}
    folder = str(Path(docs).resolve())
    kept[folder] = dict(sorted({**kept.get(folder, {}), **seconds}.items()))
    tmp = SCHEDULE.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(sorted(kept.items())), indent=1))
    tmp.replace(SCHEDULE)


def start_order(jobs: dict[str, int], docs: str | Path) -> list[str]:
    """Pages of ``docs`` (each mapped to its number of snippets; 0 for a notebook), slowest
    first.

    Slowest in the last build; pages it did not time come first (a new page may be slow):
    notebooks, then the pages with more snippets."""
    seconds = last_seconds(docs)
    return sorted(jobs, key=lambda page: (page in seconds, -seconds.get(page, 0), jobs[page] > 0, -jobs[page]))
