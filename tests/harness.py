"""The test session's snippets: each runs once, in worker processes, and the tests read its run.

A pytest plugin (``tests/conftest.py`` loads it with ``pytest_plugins``). A session goes:

1. **What each test reads.** A test declares the pages whose snippets it reads: the page
   its file is named after (``tests/test_<page>.py`` reads ``docs/<page>.md``), the page
   of the ``snippet`` it is parametrised with (or the ``page``), and those of a ``pages`` marker
   (``@pytest.mark.pages("failure-modes.md")``; ``pytestmark = ...`` for a whole file).
2. **Who runs them.** If a selected test needs the built site (``built_site``,
   ``parallel_site``), one clean ``mkdocs build`` runs in a fresh process, the network cut
   where the OS allows; else, if the tests declare two pages or more, ``python -m
   sitebuild.keep --run`` runs those pages alone. Either way two workers run the pages and
   keep each page's runs in one pickle that appears when the page is done
   (``SDPA_KEEP_RUNS``, ``sitebuild/keep.py``): what each snippet printed, the state it
   left behind, its data, and the results the page's memoised experiments computed. A
   whole tier (``python -m pytest``, ``-m "not site"``) starts them before collecting.
   With one page declared, its snippets run here, in the pytest process, as asked.
3. **Before each test** the pickles of its pages are taken, waiting for them if need be:
   ``run_snippet`` returns a snippet's kept run, and the page's memo results join this
   process's memos, so a test that calls a page's experiment itself (``run_language``)
   gets the worker's result instead of computing it a second time.
4. **Loud, never silent.** A test that reads a snippet of a page it does not declare, a
   name a kept run does not hold (it did not pickle), a page whose worker died, a snippet
   that failed in its worker (its traceback is shown): each fails the test and says why.
   Nothing is run again here to make up for it.
5. **The end.** The last test (``tests/test_harness.py``) checks that no memoised
   experiment ran in two processes; a test that ran experiments no page runs is named in
   a warning. The workers end with the session however it ends, Ctrl-C, a kill or a
   crash: every process started here dies with its parent
   (:func:`sitebuild.pool.die_with_parent`).

Around that: the tests are ordered so that each waits as little as can be
(:func:`order_tests`), and work a test module starts ahead (:func:`run_ahead`) or once
the site is built (:func:`when_site_is_built`) overlaps the other tests.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"
LIBRARY = "sdpa"

for path in (SNIPPETS, REPO):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from sdpa import env  # noqa: E402  (the environment, read and written; imports no torch)
from sitebuild import keep  # noqa: E402
from sitebuild.fences import executed_fences  # noqa: E402
from sitebuild.pool import die_with_parent  # noqa: E402

#: The fast tier's marker expression, as the README gives it.
FAST_TIER = "not site"
#: Fixtures that build a site of real snippets: the whole site (``built_site``,
#: ``parallel_site``) or a small one built both ways (``small_site``, tests/test_build.py).
#: A test that uses one, directly or through another fixture, gets the ``site`` marker.
SITE_FIXTURES = {"built_site", "parallel_site", "small_site"}
WORKERS = "2"  # the session's worker processes: the machine's two cores


# ---- options and markers -----------------------------------------------------------------


def pytest_addoption(parser):
    parser.addoption(
        "--seed-offset", type=int, default=None, metavar="N",
        help="add N to every seed the snippets, the library and the notebook draw "
        f"(sets {env.SEED_OFFSET}); with -m claims, reruns every claim on other draws",
    )


def pytest_configure(config):
    for marker in (
        "claims: asserts what a page says about a measured (random) quantity; "
        "`pytest -m claims --seed-offset N` reruns these with every seed shifted by N",
        f"site: needs a site of real snippets built (set by tests/harness.py on every test that uses "
        f"{' or '.join(sorted(SITE_FIXTURES))}); `pytest -m 'not site'` is the fast tier",
        "profiles(*names): a claim that only these profiles' experiment sizes support "
        "(`quick`, `full`); under another profile (SDPA_PROFILE) it is skipped with the reason",
        "pages(*pages): the pages (`failure-modes.md`) whose snippets the test reads, besides its "
        "file's own page (tests/test_<page>.py)",
    ):
        config.addinivalue_line("markers", marker)
    offset = config.getoption("--seed-offset")
    if offset is not None:  # set before any snippet runs; the processes started here inherit it
        env.export(**{env.SEED_OFFSET: str(offset)})
    if env.shared_memo() is None:  # one folder for the session's memoised experiments: the
        # build's workers, the snippet workers and this process share them (sdpa.runtime.memo)
        _SHARED.append(tempfile.TemporaryDirectory(prefix="sdpa-memo-"))
        env.export(**{env.SHARED_MEMO: _SHARED[-1].name})
    _config[0] = config


_SHARED: list = []  # the session's shared-memo folder, removed when the session ends


_config: list = [None]  # the session's configuration: its terminal reporter prints our lines


def say(line: str) -> None:
    """A line of the session's own (what it starts, what a test waits for), on its own line."""
    terminal = _config[0].pluginmanager.get_plugin("terminalreporter") if _config[0] else None
    if terminal is not None:
        terminal.write_line(f"[harness] {line}")


# ---- which pages include which snippets, and which pages a test reads ------------------------


@functools.cache
def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {
        str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text()) for _, path in fence.includes]
        for page in sorted(DOCS.rglob("*.md"))
    }


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


def page_of(snippet: str) -> str | None:
    """The page whose fences include ``snippet`` (``derivation/score_std.py``)."""
    return next((page for page, snippets in page_includes().items() if snippet in snippets), None)


def declared_pages(item) -> set[str]:
    """The pages (with snippets) whose snippets the test ``item`` reads: its file's page, its
    ``snippet`` parameter's page, its ``page`` parameter, and its ``pages`` markers' (step 1
    of the module's flow)."""
    pages = {item.path.stem.removeprefix("test_").replace("_", "-") + ".md"}
    params = getattr(getattr(item, "callspec", None), "params", {})
    if isinstance(params.get("snippet"), str):
        pages.add(page_of(params["snippet"]))
    if isinstance(params.get("page"), str):
        pages.add(params["page"])
    for marker in item.iter_markers("pages"):
        pages.update(marker.args)
    return {page for page in pages if page_includes().get(page)}


# ---- the workers ----------------------------------------------------------------------------


def start(command: list[str], output: Path | None = None, **options) -> subprocess.Popen:
    """A process of the session, in a process group of its own (so that it and its workers
    can be stopped together), which dies with this one however this one ends. Its output
    goes to the file ``output`` (a pipe would stall a process that prints much)."""
    with open(output or os.devnull, "w") as sink:
        return subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=functools.partial(die_with_parent, os.getpid()), **options)


def stop(process: subprocess.Popen | None) -> None:
    """Stop ``process``, if it runs, with its process group when it leads one (its workers)."""
    if process is not None and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
        process.wait()


class Workers:
    """One process (a site build, or ``python -m sitebuild.keep --run``) whose two workers
    run the snippets of ``pages`` and keep each page's runs in a pickle of their own."""

    def __init__(self, pages: list[str]):
        from sitebuild.runner import page_jobs, whole_file_fences

        self.root = Path(tempfile.mkdtemp(prefix="sdpa-session-"))
        self.folder = self.root / "runs"
        self.folder.mkdir()
        markdown = {page: (DOCS / page).read_text() for page in pages}
        jobs, hosted = page_jobs({page: whole_file_fences(markdown[page], [SNIPPETS]) for page in pages}, markdown)
        #: page -> the pickle its runs are kept in (a page run by another's worker: that page's)
        self.pickles = {page: keep.page_file(self.folder, fences) for page, fences in jobs.items() if fences}
        self.pickles.update({page: self.pickles[host] for page, host in hosted.items()})
        self.process: subprocess.Popen | None = None

    def start(self, command: list[str], **environment: str) -> None:
        self.process = start(command, self.root / "output.txt",
                             env=env.environment({env.KEEP_RUNS: str(self.folder), **environment}))

    def wait(self, page: str) -> Path | None:
        """The pickle of ``page``'s runs once it is whole; None if the workers ended without
        it. A long wait says what it waits for, every ten seconds."""
        path, start, told = self.pickles[page], time.monotonic(), 0
        while not path.exists() and self.process.poll() is None:
            time.sleep(0.05)
            waited = time.monotonic() - start
            if waited > told + 10:
                told = waited
                kept = len({p for p in self.pickles.values() if p.exists()})
                say(f"waiting {waited:.0f} s for the snippets of docs/{page} ({kept} of "
                    f"{len(set(self.pickles.values()))} pages kept so far)")
        return path if path.exists() else None

    def finished(self, timeout: float | None = None) -> tuple[int, str]:
        """The process's exit status and what it printed, once it has ended."""
        self.process.wait(timeout=timeout)
        return self.process.returncode, self.output()

    def output(self) -> str:
        return (self.root / "output.txt").read_text(errors="replace")

    def stop(self) -> None:
        stop(self.process)
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Build:
    site: Path
    offline: bool
    returncode: int
    output: str


@dataclass
class SnippetRun:
    namespace: dict
    output: str
    leaks: list[str]  # global state the run left behind: changed rcParams, open pyplot figures
    failure: object = None  # where it failed (a sitebuild.errors.SnippetFailure), else None


class KeptNamespace(dict):
    """A snippet's data as its worker kept it: a name that did not pickle is a loud error."""

    def __init__(self, data: dict, snippet: str):
        super().__init__(data)
        self.snippet = snippet

    def __missing__(self, name: str):
        raise KeyError(f"snippets/{self.snippet}'s kept run has no {name!r}: it is no name the snippet "
                       "defined, or its value could not be pickled (cloudpickle), or it is a module")


class Session:
    """The snippets' runs of this test session, and the workers that make them."""

    def __init__(self) -> None:
        self.runs: dict[str, SnippetRun] = {}  # by snippet, under snippets/
        self.workers: Workers | None = None
        self.build: Build | None = None  # when the workers' process builds the site
        self.taken: set[Path] = set()
        #: The memo results the workers computed: table -> key -> the pickle that says so.
        self.computed: dict[str, dict] = {}
        self.inserted: dict[str, set] = {}  # the keys of those put into this process's memos
        self.twice: list[str] = []  # memo results that two workers computed
        self.ran_here: dict[str, dict[str, int]] = {}  # test -> memo -> results it computed here
        self._tables: tuple[int, dict] = (-1, {})  # (modules loaded, the memo tables then)

    # ---- starting -------------------------------------------------------------------------

    def build_site(self) -> None:
        """Start the session's clean build of the whole site (offline where the OS allows)."""
        pages = sorted(page for page, snippets in page_includes().items() if snippets)
        self.workers = Workers(pages)
        offline = network_can_be_cut()
        site = self.workers.root / "site"
        command, environment = mkdocs_process("build", "--clean", "-d", str(site), offline=offline,
                                              **{env.JOBS: WORKERS})
        self.workers.start(command, **environment)
        self.build = Build(site, offline, -1, "")

    def run_pages(self, pages: list[str]) -> None:
        """Start the workers on ``pages`` alone (no site)."""
        self.workers = Workers(pages)
        self.workers.start([sys.executable, "-m", "sitebuild.keep", "--run", str(self.workers.folder),
                            "--jobs", WORKERS, *pages])

    def built(self) -> Build:
        """The session's build, once it has ended (started now if no test foresaw it)."""
        if self.build is None:
            self.build_site()
        if self.build.returncode == -1:
            if self.workers.process.poll() is None:
                say("waiting for the site's build to end")
            status, output = self.workers.finished(timeout=900)
            self.build = Build(self.build.site, self.build.offline, status, output)
        return self.build

    # ---- taking the workers' runs ----------------------------------------------------------

    def runs_page(self, page: str) -> bool:
        return self.workers is not None and page in self.workers.pickles

    def take(self, page: str) -> None:
        """``page``'s kept runs and memo results, waiting for them (step 3); a page whose
        worker died fails the test."""
        if not self.runs_page(page) or self.workers.pickles[page] in self.taken:
            return
        path = self.workers.wait(page)
        if path is None:
            status, output = self.workers.finished()
            pytest.fail(f"the session's workers ended (exit status {status}) without keeping the runs of "
                        f"docs/{page}; nothing is run again here. What they printed:\n{output[-4000:]}",
                        pytrace=False)
        self.taken.add(path)
        kept = keep.read_page(path)
        for filename, run in kept["runs"].items():
            snippet = filename.removeprefix("snippets/")
            self.runs.setdefault(snippet, SnippetRun(KeptNamespace(run["namespace"], snippet), run["output"],
                                                     run["leaks"], run["failure"]))
        for table, results in kept["memo"].items():
            memo = keep.memo_table(table)
            for key, value in results.items():
                if key not in memo:
                    dict.__setitem__(memo, key, value)
                    self.inserted.setdefault(table, set()).add(key)
        for table, keys in kept["computed"].items():
            for key in keys:
                if key in self.computed.setdefault(table, {}):
                    self.twice.append(f"{table}{key[1:]} (in {self.computed[table][key]} and {path.name})")
                self.computed[table].setdefault(key, path.name)
        gc.freeze()  # the runs live as long as the session: out of the collector's scans

    def take_all(self) -> None:
        """Every page the workers run, once they are done."""
        for page in sorted(self.workers.pickles if self.workers else ()):
            self.take(page)

    def computed_here(self) -> dict[str, set]:
        """The memo results this process computed itself (not taken from a worker, nor
        loaded from the session's shared memo)."""
        return {name: set(table.computed) - self.inserted.get(name, set())
                for name, table in keep.memo_tables().items()}

    def counts(self) -> dict[str, int]:
        """How many memo results of each table this process computed itself (not loaded
        from a worker or the shared memo; the tables looked up again only when a module was
        imported: this runs around every test)."""
        if self._tables[0] != len(sys.modules):
            self._tables = (len(sys.modules), keep.memo_tables())
        return {name: len(table.computed - self.inserted.get(name, set()))
                for name, table in self._tables[1].items()}

    def ran_twice(self) -> tuple[list[str], list[str]]:
        """The memo results computed twice in this session (so far): here and in a worker,
        and in two workers."""
        here = [f"{name}{key[1:]} (here and in {self.computed[name][key]})"
                for name, keys in self.computed_here().items() for key in keys if key in self.computed.get(name, {})]
        return here, self.twice

    # ---- a test's read ---------------------------------------------------------------------

    def run_snippet(self, snippet: str, item) -> SnippetRun:
        page = page_of(snippet)
        if page is None:
            raise LookupError(f"snippets/{snippet}: no page includes it")
        if item is not None and page not in declared_pages(item):
            pytest.fail(f"{item.nodeid} reads snippets/{snippet} but does not declare its page: mark it "
                        f'@pytest.mark.pages("{page}") (tests/harness.py, step 1)', pytrace=False)
        self.take(page)
        if snippet not in self.runs:
            if self.runs_page(page):
                pytest.fail(f"the workers kept docs/{page}'s runs without snippets/{snippet}", pytrace=False)
            from sitebuild.runner import execute  # one page's session: its snippets run here

            namespace: dict = {}
            style = keep.style()
            try:
                output = execute((SNIPPETS / snippet).read_text(), f"snippets/{snippet}", namespace)
            except Exception as error:
                self.runs[snippet] = SnippetRun(namespace, "", [], getattr(error, "failure", error))
                raise
            self.runs[snippet] = SnippetRun(namespace, output, keep.leaks(style))
        run = self.runs[snippet]
        if run.failure is not None:
            from sitebuild.runner import SnippetError

            error = SnippetError(run.failure)
            error.add_note(run.failure.traceback)
            raise error
        return run

    def stop(self) -> None:
        if self.workers is not None:
            self.workers.stop()


SESSION = Session()
_current: list = [None]  # the test being set up or run, for run_snippet's check


@pytest.fixture(scope="session")
def run_snippet():
    """``run_snippet("derivation/score_std.py")``: that snippet's run (its ``namespace``,
    ``output`` and ``leaks``), once per session (the module's flow, steps 2-4)."""
    return lambda snippet: SESSION.run_snippet(snippet, _current[0])


@pytest.fixture(scope="session")
def session_runs() -> Session:
    """The session's runs, every page's taken (the workers done): for the harness's own
    tests, which run last."""
    SESSION.take_all()
    return SESSION


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The whole site, built once per test session (:meth:`Session.build_site`), whose end
    runs every start registered with :func:`when_site_is_built`. ``SDPA_BUILT_SITE=<folder>``
    takes a site you built yourself instead (to iterate on the site's tests; never in CI)."""
    site = env.built_site()
    if site is None:
        build = SESSION.built()
        if build.returncode != 0:
            pytest.fail(f"the site did not build:\n{build.output[-6000:]}", pytrace=False)
        site = build.site
    _site_is_built(site)
    return site


@pytest.fixture(scope="session")
def parallel_site() -> Build:
    """The session's build: its site, whether it ran offline, its exit status and everything
    it printed."""
    return SESSION.built()


# ---- running mkdocs -------------------------------------------------------------------------


def mkdocs_process(*args: str, engine: str = "mkdocs", offline: bool = False, **changes: str) -> tuple[list, dict]:
    """The command line and environment of a fresh ``mkdocs`` (or ``properdocs``) process,
    never reading the snippet cache.

    It runs the engine's console script, as the README does (``python -m mkdocs`` would
    put the working folder on ``sys.path``, which the script does not). ``offline=True``
    runs it in a new network namespace whose only interface is loopback (``unshare -rn``,
    then ``ip link set lo up`` for the notebook kernel's local sockets), to show that
    building needs no network."""
    environment = env.environment({"NO_MKDOCS_2_WARNING": "1", env.CACHE: "0", **changes})
    script = Path(sys.executable).with_name(engine)
    command = [sys.executable, *([str(script)] if script.is_file() else ["-m", engine]), *args]
    if offline:
        command = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]
    return command, environment


def mkdocs(*args: str, cwd: Path = REPO, timeout: int = 900, check: bool = False, engine: str = "mkdocs",
           offline: bool = False, **changes: str) -> subprocess.CompletedProcess:
    """Run the mkdocs command line in a fresh process (see :func:`mkdocs_process`) that dies
    with the session."""
    command, environment = mkdocs_process(*args, engine=engine, offline=offline, **changes)
    result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout,
                            preexec_fn=functools.partial(die_with_parent, os.getpid()))
    if check and result.returncode != 0:
        raise AssertionError(f"mkdocs {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def build_in_process(config: Path, site: Path) -> Path:
    """Build the site of ``config`` into ``site`` in this process, through MkDocs' own API,
    serially (``SDPA_JOBS=1``: every snippet here, one after another), the cache off."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        with env.changed(**{env.CACHE: None, env.JOBS: "1", "NO_MKDOCS_2_WARNING": "1"}):
            loaded = load_config(str(config), site_dir=str(site))
            loaded.plugins.on_startup(command="build", dirty=False)
            try:
                build(loaded)
            finally:
                loaded.plugins.on_shutdown()
    finally:
        os.chdir(cwd)
    return site


@functools.cache
def network_can_be_cut() -> bool:
    try:
        probe = ["unshare", "-rn", "sh", "-c", "ip link set lo up"]
        return subprocess.run(probe, capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


# ---- work that overlaps the tests -----------------------------------------------------------

#: (fixture, start, stop): ``start(site, items)`` runs as soon as the session's site is
#: built, with the selected tests that use ``fixture``, if any; ``stop()`` runs as the
#: session ends (``tests/test_browser.py`` starts its page visits in a thread, so they
#: overlap the other tests, and waits for that thread to end).
_WHEN_BUILT: list[tuple[str, Callable[[Path, list], None], Callable[[], None]]] = []
_SELECTED: list = []  # the session's selected tests, once collected
_BUILT: list[Path] = []  # the site the starts of _WHEN_BUILT were given, once they ran
_BACKGROUND = {"visit"}  # fixtures whose work runs beside the tests


def when_site_is_built(fixture: str, start: Callable[[Path, list], None], stop: Callable[[], None]) -> None:
    _WHEN_BUILT.append((fixture, start, stop))


def _site_is_built(site: Path) -> None:
    """Run each start of :data:`_WHEN_BUILT` whose fixture a selected test uses (once)."""
    if _BUILT:
        return
    _BUILT.append(site)
    for fixture, start_work, _ in _WHEN_BUILT:
        items = [item for item in _SELECTED if fixture in getattr(item, "fixturenames", ())]
        if items:
            start_work(site, items)


#: fixture -> start(): work that runs in processes of its own (a subprocess, a notebook's
#: kernel), started as the tests are collected when a selected test uses that fixture, so
#: that it overlaps the tests run here; the fixture takes its result with :func:`ahead`.
_AHEAD: dict[str, Callable[[], object]] = {}
_STARTED: dict[str, object] = {}


def run_ahead(fixture: str, start_work: Callable[[], object]) -> None:
    _AHEAD[fixture] = start_work


def ahead(fixture: str, start_work: Callable[[], object]) -> object:
    """What ``start_work()`` returned when the session began, or (not started) what it returns now."""
    return _STARTED.pop(fixture) if fixture in _STARTED else start_work()


# ---- the session's course -------------------------------------------------------------------


def order_tests(items: list, workers: bool = False) -> None:
    """Each test waits for as little as can be: first those that need no work from the
    background; then, while the workers run, those whose work started ahead (the snippets
    are not ready yet), or else the snippets' tests first (the work started ahead goes on
    beside them), with the tests that build a small site of their own before the tests that
    read snippets (which wait for the workers); then the site's tests; the visits, page by
    page (all of a page's tests as soon as its visit is in); the harness's check last."""
    building = workers or any({"built_site", "parallel_site"} & set(getattr(item, "fixturenames", ()))
                              for item in items)

    def order(item) -> float:
        names = set(getattr(item, "fixturenames", ()))
        if "session_runs" in names:
            return 5
        if _BACKGROUND & names:
            return 4
        if {"built_site", "parallel_site"} & names:
            return 3
        if SITE_FIXTURES & names:  # a site of its own (small_site), built beside the session's
            return 1.5
        started_ahead, snippets = bool(set(_AHEAD) & names), bool(declared_pages(item))
        if started_ahead or snippets:
            return 1 if started_ahead == building else 2
        return 0

    def params(item) -> tuple:
        return tuple(sorted(getattr(getattr(item, "callspec", None), "params", {}).items()))

    first = {}  # the visits' tests of one page and scheme, where the first of them is
    for position, item in enumerate(items):
        if _BACKGROUND & set(getattr(item, "fixturenames", ())):
            first.setdefault(params(item), position)
    items.sort(key=lambda item: (order(item), first.get(params(item), 0) if order(item) == 4 else 0))


def whole_tier(config) -> str:
    """Which whole tier the command runs: ``"all"`` (``python -m pytest``, as the README and
    CI run it), ``"fast"`` (``python -m pytest -m "not site"``), or ``""`` where it selects
    tests (a path, ``-k``, another ``-m``, ``--deselect``, the last failures)."""
    option = config.option
    if (config.args_source is not pytest.Config.ArgsSource.TESTPATHS or option.keyword
            or getattr(option, "deselect", None) or getattr(option, "lf", False) or option.collectonly):
        return ""
    if not option.markexpr:
        return "" if env.built_site() else "all"
    return "fast" if option.markexpr.strip() == FAST_TIER else ""


def pytest_sessionstart(session):
    """A whole tier reads every page's snippets, so their workers start now, before the
    tests are collected (three seconds of imports on one core)."""
    tier = whole_tier(session.config)
    if tier == "all":
        SESSION.build_site()
    elif tier == "fast":
        SESSION.run_pages(sorted(page for page, snippets in page_includes().items() if snippets))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the tests that need a site of real snippets (``site``)."""
    for item in items:
        if SITE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)


@pytest.hookimpl(tryfirst=True)  # ordered before anything reads the list
def pytest_collection_finish(session):
    """Start the workers now if no whole tier started them: the site's build if a selected
    test needs the site (and no built site was given), else the declared pages' snippets
    if they are two or more."""
    uses = [set(getattr(item, "fixturenames", ())) for item in session.items]
    builds = any("parallel_site" in names or ("built_site" in names and not env.built_site()) for names in uses)
    pages = sorted(set().union(*(declared_pages(item) for item in session.items)))
    order_tests(session.items, workers=builds or len(pages) > 1)
    _SELECTED[:] = session.items
    # What collecting imported (torch, matplotlib, the library: millions of objects) lives
    # as long as the session: out of the garbage collector's scans, which otherwise walk it
    # again at every full collection, and five times over as pytest ends (two seconds).
    gc.freeze()
    if session.config.option.collectonly:
        return
    for fixture, start_work in _AHEAD.items():
        if any(fixture in names for names in uses):
            _STARTED[fixture] = start_work()
    if SESSION.workers is None:
        if builds:
            SESSION.build_site()
        elif len(pages) > 1:
            SESSION.run_pages(pages)
    if SESSION.build is not None:
        needs = [item.nodeid for item in session.items if {"built_site", "parallel_site"} & set(item.fixturenames)]
        say(f"building the whole site in two workers for {len(needs)} test(s) that read it ({needs[0]}"
            + (", ..." if len(needs) > 1 else "") + f"); {env.BUILT_SITE}=<folder> tests a site you built instead"
            if needs else "building the whole site in two workers")
    elif SESSION.workers is not None:
        say(f"running the snippets of {len(SESSION.workers.pickles)} pages in two workers")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip a claim of another profile; take the test's pages' runs before its fixtures."""
    _current[0] = item
    marker = item.get_closest_marker("profiles")
    if marker is not None:
        from sdpa.runtime import profile  # imports torch: only when a test asks

        if profile() not in marker.args:
            pytest.skip(f"a claim of the {' and '.join(marker.args)} profile's experiment sizes; "
                        f"this run's profile is {profile()} (set SDPA_PROFILE)")
    for page in sorted(declared_pages(item)):
        SESSION.take(page)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Note a test that ran memoised experiments here that no worker ran (step 5)."""
    before = SESSION.counts() if SESSION.workers else None
    try:
        return (yield)
    finally:
        if before is not None:
            ran = {name: count - before.get(name, 0) for name, count in SESSION.counts().items()}
            if any(ran.values()):
                SESSION.ran_here[item.nodeid] = {name: count for name, count in ran.items() if count}


def pytest_terminal_summary(terminalreporter):
    """Name the tests that ran experiments no page of the session runs, here in pytest's process."""
    if SESSION.ran_here:
        terminalreporter.section("experiments run in the pytest process (no page of this session runs them)")
        for nodeid, ran in SESSION.ran_here.items():
            terminalreporter.line(f"{nodeid}: {', '.join(f'{name} x{count}' for name, count in ran.items())}")


def pytest_unconfigure(config):
    for _, _, stop_work in _WHEN_BUILT:
        stop_work()
    SESSION.stop()
    for started in _STARTED.values():  # work started ahead that no test took (-x, -k)
        for part in started if isinstance(started, tuple) else (started,):
            if isinstance(part, subprocess.Popen):
                stop(part)
    for folder in _SHARED:  # after every process that wrote to it has stopped
        folder.cleanup()
