"""The test session reads the store: every snippet runs once, into it, and each test reads its run.

A pytest plugin (``tests/conftest.py`` loads it). A session goes:

1. **What each test reads**: its file's page (``tests/test_failure_modes.py`` reads
   ``docs/failure-modes.md``), the page of its ``snippet`` or ``page`` parameter, and a
   ``pages`` marker's (``@pytest.mark.pages("failure-modes.md")``).
2. **Who runs them**: what the store lacks of them (``sitebuild/execute.py``) runs once, in
   two workers: in a clean ``mkdocs build`` (the network cut where the OS allows) when a
   test needs the site, else in ``python -m sitebuild.execute PAGE ...``; a whole tier
   starts it before collecting.
3. **Before each test** its pages' runs are read from the store, waiting for them if need
   be; an engine's run a test asks for itself comes from the store too.
4. **Loud, never silent**: reading an undeclared page, a name a stored run lacks (it did not
   pickle), a snippet that failed (its traceback shown), a run its process ended without,
   a named site (``SDPA_BUILT_SITE``) built from other code: each fails the test, saying why.
5. **Around it**: the processes started here die with the session however it ends; work a
   module starts ahead (:func:`run_ahead`) or once the site is built
   (:func:`when_site_is_built`) overlaps the other tests (:func:`order_tests`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import pickle
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
from sitebuild import execute  # noqa: E402
from sitebuild.execute import SnippetError, SnippetFailure, die_with_parent  # noqa: E402
from sitebuild.fences import executed_fences  # noqa: E402

#: The fast tier's marker expression, as the README gives it.
FAST_TIER = "not site"
#: Fixtures that build a site of real snippets: a test that uses one gets the ``site`` marker.
SITE_FIXTURES = {"built_site", "parallel_site", "small_site"}
WORKERS = "2"  # the session's worker processes: the machine's two cores


def pytest_addoption(parser):
    parser.addoption("--seed-offset", type=int, default=None, metavar="N", help="add N to every seed the snippets, "
                     f"the library and the notebook draw (sets {env.SEED_OFFSET}); with -m claims, reruns every claim")


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
    env.export(**{env.STORE: str(execute.store())})  # this process's engine runs, and its children's
    _config[0] = config


_config: list = [None]  # the session's configuration: its terminal reporter prints our lines


def say(line: str) -> None:
    """A line of the session's own (what it starts, what a test waits for), on its own line."""
    terminal = _config[0].pluginmanager.get_plugin("terminalreporter") if _config[0] else None
    if terminal is not None:
        terminal.write_line(f"[harness] {line}")


@functools.cache
def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text())
                                          for _, path in fence.includes] for page in sorted(DOCS.rglob("*.md"))}


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


def page_of(snippet: str) -> str | None:
    """The page whose fences include ``snippet`` (``derivation/score_std.py``)."""
    return next((page for page, snippets in page_includes().items() if snippet in snippets), None)


def declared_pages(item) -> set[str]:
    """The pages (with snippets) whose snippets the test ``item`` reads (step 1 of the flow)."""
    pages = {item.path.stem.removeprefix("test_").replace("_", "-") + ".md"}
    params = getattr(getattr(item, "callspec", None), "params", {})
    if isinstance(params.get("snippet"), str):
        pages.add(page_of(params["snippet"]))
    if isinstance(params.get("page"), str):
        pages.add(params["page"])
    for marker in item.iter_markers("pages"):
        pages.update(marker.args)
    return {page for page in pages if page_includes().get(page)}


def start(command: list[str], output: Path | None = None, **options) -> subprocess.Popen:
    """A process of the session, in a process group of its own (stopped with its workers),
    that dies with this one however this one ends, printing to the file ``output``."""
    with open(output or os.devnull, "w") as sink:
        return subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=functools.partial(die_with_parent, os.getpid()), **options)


def stop(process: subprocess.Popen | None) -> None:
    """Stop ``process``, if it runs, with its process group when it leads one (its workers)."""
    if process is not None and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL) if os.getpgid(process.pid) == process.pid else process.kill()
        process.wait()


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
    failure: SnippetFailure | None = None
    trained: list[str] | None = None  # the loops that stepped an optimiser while it ran


class KeptNamespace(dict):
    """A snippet's data as the store kept it: a name that did not pickle is a loud error."""

    def __init__(self, data: dict, snippet: str):
        super().__init__(data)
        self.snippet = snippet

    def __missing__(self, name: str):
        raise KeyError(f"snippets/{self.snippet}'s stored run has no {name!r}: it is no name the snippet "
                       "defined, or its value could not be pickled (cloudpickle), or it is a module")


class Session:
    """The snippets' runs of this test session, and the one process that makes what the store lacks."""

    def __init__(self) -> None:
        self.plan = execute.Plan({}, {}, execute.code(), execute.device(), execute.store())
        self.runs: dict[str, SnippetRun] = {}  # by snippet, under snippets/
        self.root = Path(tempfile.mkdtemp(prefix="sdpa-session-"))
        self.process: subprocess.Popen | None = None  # the build, or python -m sitebuild.execute
        self.build: Build | None = None  # when that process builds the site
        self.started = time.time()  # a failure stored before is no run: it runs again

    @functools.cache  # noqa: B019 - one session
    def record(self, snippet: str) -> Path:
        source = (SNIPPETS / snippet).read_text(encoding="utf-8")
        return self.plan.record(execute.Snippet(page_of(snippet) or "", f"snippets/{snippet}", source))

    def missing(self, pages) -> list[str]:
        """The pages of ``pages`` whose snippets' runs the store lacks."""
        def ran(path: Path) -> bool:
            failed = execute.failed(path)
            return path.exists() or failed.exists() and failed.stat().st_mtime >= self.started

        return sorted(page for page in pages if not all(ran(self.record(s)) for s in page_includes()[page]))

    def output(self) -> str:
        return (self.root / "output.txt").read_text(errors="replace") if self.process else ""

    def build_site(self) -> None:
        """Start the session's clean build of the whole site (offline where the OS allows)."""
        say(f"building the site in two workers (what the store lacks runs first); {env.BUILT_SITE}=<folder> "
            "tests a site you built instead")
        self.build = Build(self.root / "site", network_can_be_cut(), -1, "")
        command, environment = mkdocs_process("build", "--clean", "-d", str(self.build.site),
                                              offline=self.build.offline, **{env.JOBS: WORKERS})
        self.process = start(command, self.root / "output.txt", env=environment)

    def run_pages(self, pages: list[str]) -> None:
        """Start running what the store lacks of ``pages`` (no site), if anything."""
        if not pages:
            return
        say(f"running the snippets of {', '.join(pages)} in two workers (the store lacks them)")
        self.process = start([sys.executable, "-m", "sitebuild.execute", "--jobs", WORKERS, *pages],
                             self.root / "output.txt", env=env.environment())

    def built(self) -> Build:
        """The session's build, once it has ended (started now if no test foresaw it)."""
        if self.build is None:
            stop(self.process)  # a run of pages alone: the build runs what is left of it
            self.build_site()
        if self.build.returncode == -1:
            if self.process.poll() is None:
                say("waiting for the site's build to end")
            self.process.wait(timeout=3600)
            self.build = Build(self.build.site, self.build.offline, self.process.returncode, self.output())
        return self.build

    def wait_for(self, page: str) -> None:
        """Until the store holds the runs of ``page``'s snippets, started if no process runs
        them (step 3); fail if the process ends without them."""
        if not self.missing([page]):
            return
        if self.process is None or (self.process.poll() is not None and self.build is None):
            self.run_pages([page])
        waited, told = time.monotonic(), 0.0
        while self.missing([page]) and self.process.poll() is None:
            time.sleep(0.05)
            if time.monotonic() - waited > told + 10:
                told = time.monotonic() - waited
                say(f"waiting {told:.0f} s for the snippets of docs/{page}")
        if self.missing([page]):
            pytest.fail(f"the session's run ended (exit status {self.process.returncode}) without the runs of "
                        f"docs/{page}. What it printed:\n{self.output()[-4000:]}", pytrace=False)

    def run_snippet(self, snippet: str, item) -> SnippetRun:
        page = page_of(snippet)
        if page is None:
            raise LookupError(f"snippets/{snippet}: no page includes it")
        if item is not None and page not in declared_pages(item):
            pytest.fail(f"{item.nodeid} reads snippets/{snippet} but does not declare its page: mark it "
                        f'@pytest.mark.pages("{page}") (tests/harness.py, step 1)', pytrace=False)
        if snippet not in self.runs:
            self.wait_for(page)
            path = self.record(snippet)
            record = execute.read(path, self.started)
            data = pickle.loads(path.with_suffix(".pickle").read_bytes()) if not record["failure"] else {}
            failure = SnippetFailure(**record["failure"]) if record["failure"] else None
            self.runs[snippet] = SnippetRun(KeptNamespace(data, snippet), record["output"], record["leaks"], failure,
                                            record["trained"])
            gc.freeze()  # the runs live as long as the session: out of the collector's scans
        run = self.runs[snippet]
        if run.failure is not None:
            error = SnippetError(run.failure)
            error.add_note(run.failure.traceback)
            raise error
        return run


SESSION = Session()
_current: list = [None]  # the test being set up or run, for run_snippet's check


@pytest.fixture(scope="session")
def run_snippet():
    """``run_snippet("derivation/score_std.py")``: that snippet's run (steps 2-4)."""
    return lambda snippet: SESSION.run_snippet(snippet, _current[0])


def check_built_site(site: Path) -> list[str]:
    """What differs between the digests a built site records and the checkout's."""
    from mkdocs.config import load_config

    from sitebuild import report

    try:
        recorded = json.loads((site / "build-report.json").read_text())["digests"]
    except (OSError, ValueError, KeyError):
        return [f"{site} holds no build-report.json with the digests it was built from"]
    with contextlib.chdir(REPO):
        current = report.digests(load_config(str(REPO / "mkdocs.yml")), SESSION.plan)
    return [f"its {name}: {recorded.get(name)} against the checkout's {value}"
            for name, value in current.items() if recorded.get(name) != value]


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The whole site, built once per session (or ``SDPA_BUILT_SITE``'s, if it is the checkout's);
    its end starts what :func:`when_site_is_built` registered."""
    site = env.built_site()
    if site is not None:
        differ = check_built_site(site)
        if differ:
            pytest.fail(f"{env.BUILT_SITE}={site} was built from other code than this checkout's: build it "
                        "again (mkdocs build -d <folder>) or unset the variable.\n" + "\n".join(differ), pytrace=False)
    else:
        build = SESSION.built()
        if build.returncode != 0:
            pytest.fail(f"the site did not build:\n{build.output[-6000:]}", pytrace=False)
        site = build.site
    _site_is_built(site)
    return site


@pytest.fixture(scope="session")
def parallel_site() -> Build:
    """The session's build: its site, whether it ran offline, its exit status and output."""
    return SESSION.built()


def mkdocs_process(*args: str, engine: str = "mkdocs", offline: bool = False, **changes: str) -> tuple[list, dict]:
    """The command line and environment of a fresh ``mkdocs`` (or ``properdocs``) process:
    the engine's console script, as the README runs it; ``offline``, in a new network
    namespace whose only interface is loopback (``unshare -rn``, then ``ip link set lo up``
    for the notebook kernel's local sockets), to show that building needs no network."""
    environment = env.environment({"NO_MKDOCS_2_WARNING": "1", **changes})
    script = Path(sys.executable).with_name(engine)
    command = [sys.executable, *([str(script)] if script.is_file() else ["-m", engine]), *args]
    if offline:
        command = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]
    return command, environment


@functools.cache
def network_can_be_cut() -> bool:
    try:
        return subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


#: (fixture, start, stop): ``start(site, items)`` runs once the session's site is built, with
#: the selected tests that use ``fixture``, if any; ``stop()`` as the session ends (the page
#: visits of ``tests/test_browser.py`` run so, in a thread, beside the other tests).
_WHEN_BUILT: list[tuple[str, Callable[[Path, list], None], Callable[[], None]]] = []
_SELECTED: list = []  # the session's selected tests, once collected
_BUILT: list[Path] = []  # the site the starts of _WHEN_BUILT were given, once they ran
_BACKGROUND = {"visit"}  # fixtures whose work runs beside the tests


def when_site_is_built(fixture: str, start: Callable[[Path, list], None], stop: Callable[[], None]) -> None:
    _WHEN_BUILT.append((fixture, start, stop))


def _site_is_built(site: Path) -> None:
    """Run each start of :data:`_WHEN_BUILT` whose fixture a selected test uses (once)."""
    for fixture, start_work, _ in _WHEN_BUILT if not _BUILT else []:
        if items := [item for item in _SELECTED if fixture in getattr(item, "fixturenames", ())]:
            start_work(site, items)
    _BUILT.append(site)


#: fixture -> start(): work in processes of its own (a subprocess, a notebook's kernel),
#: started once the tests are collected if one uses that fixture, which takes its result
#: with :func:`ahead`.
_AHEAD: dict[str, Callable[[], object]] = {}
_STARTED: dict[str, object] = {}


def run_ahead(fixture: str, start_work: Callable[[], object]) -> None:
    _AHEAD[fixture] = start_work


def ahead(fixture: str, start_work: Callable[[], object]) -> object:
    """What ``start_work()`` returned when the session began, or (not started) what it returns now."""
    return _STARTED.pop(fixture) if fixture in _STARTED else start_work()


def order_tests(items: list) -> None:
    """First the tests that need nothing from the background, then those whose work started
    ahead or that build a small site, then those that read snippets (they wait for the
    store), then the site's, then the visits, page by page (as soon as a page's visit is in)."""
    def order(item) -> int:
        names = set(getattr(item, "fixturenames", ()))
        return (4 if _BACKGROUND & names else 3 if {"built_site", "parallel_site"} & names else 2
                if declared_pages(item) else 1 if (SITE_FIXTURES | set(_AHEAD)) & names else 0)

    def params(item) -> tuple:
        return tuple(sorted(getattr(getattr(item, "callspec", None), "params", {}).items()))

    first = {}  # the visits' tests of one page and scheme, where the first of them is
    for position, item in enumerate(items):
        if _BACKGROUND & set(getattr(item, "fixturenames", ())):
            first.setdefault(params(item), position)
    items.sort(key=lambda item: (order(item), first.get(params(item), 0) if order(item) == 4 else 0))


def whole_tier(config) -> str:
    """``"all"`` (``python -m pytest``), ``"fast"`` (``-m "not site"``), or ``""`` where the
    command selects tests (a path, ``-k``, another ``-m``, ``--deselect``, ``--lf``)."""
    option = config.option
    if (config.args_source is not pytest.Config.ArgsSource.TESTPATHS or option.keyword
            or getattr(option, "deselect", None) or getattr(option, "lf", False) or option.collectonly):
        return ""
    if not option.markexpr:
        return "" if env.built_site() else "all"
    return "fast" if option.markexpr.strip() == FAST_TIER else ""


def pytest_sessionstart(session):
    """A whole tier reads every page's snippets: what the store lacks starts before collecting."""
    tier = whole_tier(session.config)
    if tier == "all":
        SESSION.build_site()
    elif tier == "fast":
        SESSION.run_pages(SESSION.missing(page for page, found in page_includes().items() if found))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the tests that need a site of real snippets (``site``)."""
    for item in items:
        if SITE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)


@pytest.hookimpl(tryfirst=True)  # ordered before anything reads the list
def pytest_collection_finish(session):
    """Start what the selected tests need if no whole tier did: the site's build if a test
    needs the site (and no built site was given), else what the store lacks of their pages."""
    uses = [set(getattr(item, "fixturenames", ())) for item in session.items]
    order_tests(session.items)
    _SELECTED[:] = session.items
    gc.freeze()  # what collecting imported lives as long as the session: out of the collector's scans
    if session.config.option.collectonly:
        return
    for fixture, start_work in _AHEAD.items():
        if any(fixture in names for names in uses):
            _STARTED[fixture] = start_work()
    if SESSION.process is None:
        if any("parallel_site" in names or ("built_site" in names and not env.built_site()) for names in uses):
            SESSION.build_site()
        else:
            SESSION.run_pages(SESSION.missing(set().union(*(declared_pages(item) for item in session.items))))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip a claim of another profile; wait for the runs of the test's pages."""
    _current[0] = item
    marker = item.get_closest_marker("profiles")
    if marker is not None and env.profile() not in marker.args:
        pytest.skip(f"a claim of the {' and '.join(marker.args)} profile's experiment sizes; "
                    f"this run's profile is {env.profile()} (set SDPA_PROFILE)")
    for page in sorted(declared_pages(item)):
        SESSION.wait_for(page)


def pytest_unconfigure(config):
    for _, _, stop_work in _WHEN_BUILT:
        stop_work()
    stop(SESSION.process)
    for started in _STARTED.values():  # work started ahead that no test took (-x, -k)
        for part in started if isinstance(started, tuple) else (started,):
            if isinstance(part, subprocess.Popen):
                stop(part)

