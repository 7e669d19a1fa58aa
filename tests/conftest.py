"""Shared fixtures: which snippets the pages include, running them, building the site."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
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

from sdpa import env as sdpa_env  # noqa: E402  (the environment variables' names; imports no torch)
from sitebuild.fences import executed_fences  # noqa: E402

pytest_plugins = ["claims"]  # the claim fixture: claims record their statistics (tests/claims.py)

#: The variable through which sdpa.runtime adds an offset to every seed.
SEED_OFFSET_ENV = sdpa_env.SEED_OFFSET


def pytest_addoption(parser):
    parser.addoption(
        "--seed-offset", type=int, default=None, metavar="N",
        help="add N to every seed the snippets, the library and the notebook draw "
        f"(sets {SEED_OFFSET_ENV}); with -m claims, reruns every claim on other draws",
    )


#: Fixtures that build a site of real snippets: the whole site (``built_site``,
#: ``parallel_site``) or a small one built both ways (``small_site``, tests/test_build.py).
#: A test that uses one, directly or through another fixture (the page visits, the served
#: site), gets the ``site`` marker by itself (:func:`pytest_collection_modifyitems`):
#: ``python -m pytest -m "not site"`` is the fast tier, every snippet and claim, the
#: library, the throwaway builds that must fail, no site build (its snippets run in two
#: workers all the same: :class:`SessionSnippets`).
SITE_FIXTURES = {"built_site", "parallel_site", "small_site"}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "claims: asserts what a page says about a measured (random) quantity; "
        "`pytest -m claims --seed-offset N` reruns these with every seed shifted by N",
    )
    config.addinivalue_line(
        "markers", "site: needs the whole site built (set by conftest.py on every test that uses "
        f"{' or '.join(sorted(SITE_FIXTURES))}); `pytest -m 'not site'` is the fast tier",
    )
    config.addinivalue_line(
        "markers", "profiles(*names): a claim that only these profiles' experiment sizes support "
        "(`quick`, `full`); under another profile (SDPA_PROFILE) it is skipped with the reason",
    )
    offset = config.getoption("--seed-offset")
    if offset is not None:  # set before any snippet runs; child processes inherit it
        os.environ[SEED_OFFSET_ENV] = str(offset)


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("profiles")
    if marker is not None:
        from sdpa.runtime import profile  # imports torch: only when a test asks

        if profile() not in marker.args:
            pytest.skip(f"a claim of the {' and '.join(marker.args)} profile's experiment sizes; "
                        f"this run's profile is {profile()} (set SDPA_PROFILE)")


def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {
        str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text()) for _, path in fence.includes]
        for page in sorted(DOCS.rglob("*.md"))
    }


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


@dataclass
class SnippetRun:
    namespace: dict
    output: str
    leaks: list[str]  # global state the run left behind: changed rcParams, open pyplot figures


_runs: dict[str, SnippetRun] = {}  # by snippet path under snippets/; filled by the session's build too


def _watched(code: str, filename: str, execute) -> SnippetRun:
    """Run a snippet with the build's executor, noting what global state it leaves behind."""
    from sitebuild import keep

    namespace: dict = {}
    style = keep._style()
    output = execute(code, filename, namespace)
    return SnippetRun(namespace, output, keep.leaks(style))


class KeptNamespace(dict):
    """A snippet's data as the session's build kept it. A name the build could not hand
    over (what does not pickle: a function the snippet defines) runs the snippet here,
    once, and is read from that run."""

    def __init__(self, data: dict, snippet: str):
        super().__init__(data)
        self.snippet = snippet

    def __missing__(self, name: str):
        from sitebuild.runner import execute

        if not getattr(self, "ran_here", False):
            self.ran_here = True
            here = _watched((SNIPPETS / self.snippet).read_text(), f"snippets/{self.snippet}", execute)
            for key, value in here.namespace.items():
                self.setdefault(key, value)
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)


def _run(snippet: str) -> SnippetRun:
    """A snippet's run: the one the session's site build kept (when this session builds the
    site), or the one the session's snippet workers kept for its page (when it builds none:
    :class:`SessionSnippets`), else a run here, now (kept for the session)."""
    if snippet not in _runs and _SESSION.build is not None:
        _SESSION.take(snippet)
    if snippet not in _runs:
        _SNIPPETS.take(snippet)
    if snippet not in _runs:
        from sitebuild.runner import execute

        _runs[snippet] = _watched((SNIPPETS / snippet).read_text(), f"snippets/{snippet}", execute)
    return _runs[snippet]


@pytest.fixture(scope="session")
def browser_available() -> None:
    """Skip (fail under CI) where Chromium, Playwright or axe-core is missing."""
    from browser_support import chromium_path, unavailable

    if chromium_path() is None:
        unavailable("Chromium not found at /usr/bin/chromium: `apt-get install -y chromium` (Debian)")
    try:
        import axe_playwright_python  # noqa: F401  (axe-core, used by the visits)
        import playwright  # noqa: F401
    except ImportError as missing:
        unavailable(f"{missing.name} is not installed: pip install -r requirements.txt")


@pytest.fixture(scope="session")
def browser(browser_available):
    """The session's headless Chromium (one Playwright per thread: the page visits run their own)."""
    from playwright.sync_api import sync_playwright

    from browser_support import launch

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def run_snippet():
    """Run a snippet once per test session (the build's run when the site was built here,
    the snippet workers' when they ran its page: :func:`_run`) and keep its data."""
    return _run


def mkdocs_process(*args: str, engine: str = "mkdocs", offline: bool = False, **env: str) -> tuple[list[str], dict]:
    """The command line and environment of a fresh ``mkdocs`` (or ``properdocs``) process,
    never reading the snippet cache.

    It runs the engine's console script, as the README does (``python -m mkdocs`` would
    put the working folder on ``sys.path``, which the script does not). ``offline=True``
    runs it in a new network namespace whose only interface is loopback (``unshare -rn``,
    then ``ip link set lo up`` for the notebook kernel's local sockets), to show that
    building needs no network."""
    environment = {k: v for k, v in os.environ.items() if k != sdpa_env.CACHE}
    environment.update({"NO_MKDOCS_2_WARNING": "1", sdpa_env.CACHE: "0"}, **env)
    script = Path(sys.executable).with_name(engine)
    command = [sys.executable, *([str(script)] if script.is_file() else ["-m", engine]), *args]
    if offline:
        command = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]
    return command, environment


def mkdocs(*args: str, cwd: Path = REPO, timeout: int = 900, check: bool = False, engine: str = "mkdocs",
           offline: bool = False, **env: str) -> subprocess.CompletedProcess:
    """Run the mkdocs command line in a fresh process (see :func:`mkdocs_process`)."""
    command, environment = mkdocs_process(*args, engine=engine, offline=offline, **env)
    result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"mkdocs {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def build_in_process(config: Path, site: Path) -> Path:
    """Build the site of ``config`` into ``site`` in this process, through MkDocs' own API,
    serially (``SDPA_JOBS=1``: every snippet here, one after another), the cache off."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    saved = {key: os.environ.get(key) for key in (sdpa_env.CACHE, sdpa_env.JOBS, "NO_MKDOCS_2_WARNING")}
    os.environ.pop(sdpa_env.CACHE, None)
    os.environ.update({sdpa_env.JOBS: "1", "NO_MKDOCS_2_WARNING": "1"})
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        loaded = load_config(str(config), site_dir=str(site))
        loaded.plugins.on_startup(command="build", dirty=False)
        try:
            build(loaded)
        finally:
            loaded.plugins.on_shutdown()
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return site


def network_can_be_cut() -> bool:
    try:
        probe = ["unshare", "-rn", "sh", "-c", "ip link set lo up"]
        return subprocess.run(probe, capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


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
    for fixture, start, _ in _WHEN_BUILT:
        items = [item for item in _SELECTED if fixture in getattr(item, "fixturenames", ())]
        if items:
            start(site, items)


#: fixture -> start(): work that runs in processes of its own (a subprocess, a notebook's
#: kernel), started as the tests are collected when a selected test uses that fixture, so
#: that it overlaps the tests run here; the fixture takes its result with :func:`ahead`.
_AHEAD: dict[str, Callable[[], object]] = {}
_STARTED: dict[str, object] = {}


def run_ahead(fixture: str, start: Callable[[], object]) -> None:
    _AHEAD[fixture] = start


def ahead(fixture: str, start: Callable[[], object]) -> object:
    """What ``start()`` returned when the session began, or (not started) what it returns now."""
    return _STARTED.pop(fixture) if fixture in _STARTED else start()


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the tests that need a site of real snippets (``site``)."""
    for item in items:
        if SITE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)



@pytest.fixture(scope="session")
def built_site() -> Path:
    """The whole site, built once per test session (see :class:`SessionBuild`), whose end
    runs every start registered with :func:`when_site_is_built` (a snippet's test that
    waited for the build's runs may see it first). ``SDPA_BUILT_SITE=<folder>`` takes a
    site you built yourself instead (to iterate on the site's tests; never set in CI)."""
    if os.environ.get(sdpa_env.BUILT_SITE):
        site = Path(os.environ[sdpa_env.BUILT_SITE]).resolve()
    else:
        build = _SESSION.finished()
        if build.returncode != 0:
            pytest.fail(f"the site did not build:\n{build.output[-6000:]}", pytrace=False)
        site = build.site
    _site_is_built(site)
    return site


# ---- the session's build, in the background from the start of the session -------------

PARALLEL_JOBS = "2"


@dataclass
class Build:
    site: Path
    offline: bool
    returncode: int
    output: str


class SessionBuild:
    """The session's one build of the whole site: a clean ``mkdocs build`` in a fresh
    process, its snippets and notebook in two worker processes (``SDPA_JOBS=2``), with the
    network cut where the OS allows it (``unshare -rn``); started with the session when it
    runs every test, else once the tests are collected, so the tests that need no site run
    meanwhile.

    Its workers keep every snippet's data (``SDPA_KEEP_RUNS``, :mod:`sitebuild.keep`), a
    page's as soon as that page is done: ``run_snippet`` and the experiments the library
    memoises take them from there (a page's snippet tests need not wait for the whole
    build), and no snippet runs twice in a session. The serial path (``SDPA_JOBS=1``, every
    snippet in the MkDocs process) and its byte identity with this one are checked on a
    small site of real snippets (``tests/test_build.py``). A session that builds no site
    runs its snippets in the same workers without MkDocs (:class:`SessionSnippets`)."""

    def __init__(self) -> None:
        self.build: Build | None = None
        self.process: subprocess.Popen | None = None
        self.runs: Path | None = None
        self.pickles: dict[str, Path] = {}  # snippet -> the pickle its page's runs will be kept in
        self.taken: set[Path] = set()

    def start(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="sdpa-session-site-"))
        site, self.runs = root / "site", root / "runs"
        self.runs.mkdir()
        self.pickles = _kept_pickles(self.runs, sorted(page for page, snippets in page_includes().items() if snippets))
        offline = network_can_be_cut()
        command, env = mkdocs_process("build", "--clean", "-d", str(site), offline=offline,
                                      **{sdpa_env.JOBS: PARALLEL_JOBS, sdpa_env.KEEP_RUNS: str(self.runs)})
        self.process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, start_new_session=True)
        self.build = Build(site, offline, -1, "")
        self.root = root

    def finished(self) -> Build:
        if self.build is None:  # a test asked for the site that collection did not foresee
            self.start()
        if self.process is not None and self.build.returncode == -1:
            output = self.process.communicate(timeout=900)[0]
            self.build = Build(self.build.site, self.build.offline, self.process.returncode, output)
            if self.build.returncode == 0 and not os.environ.get(sdpa_env.BUILT_SITE):
                _site_is_built(self.build.site)  # (a site given instead is the visits' site)
        return self.build

    def take(self, snippet: str) -> None:
        """The runs of ``snippet``'s page into ``_runs``, as soon as the build's worker has
        kept them; else (not a page's fence, or its worker died), once the build is over,
        every run it kept. A failed run is left out: ``run_snippet`` then runs it here, and
        fails as it fails."""
        path = self.pickles.get(snippet)
        if path is not None and path not in self.taken:
            self.taken.add(path)
            if _take_pickle(path, self.process):
                return
        if self.runs is None:
            return
        self.finished()
        for path in sorted(set(self.runs.glob("*.pickle")) - self.taken):
            _take_pickle(path, self.process)
        self.runs = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:  # the session ended first (-x, Ctrl-C)
            # The whole process group: its workers and their forkserver hold its output open.
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate()
        if getattr(self, "root", None) is not None:
            shutil.rmtree(self.root, ignore_errors=True)


_SESSION = SessionBuild()


def _kept_pickles(folder: Path, pages: list[str]) -> dict[str, Path]:
    """snippet -> the pickle in ``folder`` that the workers keep its page's runs in (a page
    that runs with another is kept in that page's: :func:`sitebuild.runner.page_jobs`)."""
    from sitebuild import keep
    from sitebuild.runner import page_jobs, whole_file_fences

    markdown = {page: (DOCS / page).read_text() for page in pages}
    jobs, _ = page_jobs({page: whole_file_fences(markdown[page], [SNIPPETS]) for page in pages}, markdown)
    return {filename.removeprefix("snippets/"): keep.page_file(folder, fences)
            for fences in jobs.values() for filename, _ in fences}


def _take_pickle(path: Path, process: subprocess.Popen) -> bool:
    """Wait for the pickle ``path`` to appear (or ``process``, the workers', to end); take
    its runs into ``_runs``. False where it never appeared."""
    from sitebuild import keep

    while not path.exists() and process.poll() is None:
        time.sleep(0.05)
    if not path.exists():
        return False
    _take(keep.load_page(path))
    gc.freeze()  # the runs live as long as the session (see pytest_collection_finish)
    return True


def _take(kept_runs: dict[str, dict]) -> None:
    """Kept runs (:mod:`sitebuild.keep`) into ``_runs``; a failed run is left out, so that
    ``run_snippet`` runs it here and fails as it fails."""
    for filename, kept in kept_runs.items():
        if not kept["failed"]:
            snippet = filename.removeprefix("snippets/")
            _runs.setdefault(snippet, SnippetRun(KeptNamespace(kept["namespace"], snippet), kept["output"],
                                                 kept["leaks"]))


# ---- the session's snippets, when it builds no site ------------------------------------


class SessionSnippets:
    """The snippets of a session that builds no site (``python -m pytest -m "not site"``):
    when the selected tests read the snippets of two pages or more, every executed fence of
    those pages runs in two worker processes, started with the session for the fast tier
    (every page), else once the tests are collected (``python -m sitebuild.keep --run``:
    :class:`sitebuild.pool.Pool` and :func:`sitebuild.runner.run_page`, the build's own
    workers and jobs, slowest page first), while the tests that need no snippet run here.

    Each page's runs are kept in one pickle (``SDPA_KEEP_RUNS``) that appears when the
    page is done; ``run_snippet`` waits for its snippet's page alone and takes that page's
    runs, and the memo results in it go into this session's memos, so the claim tests that
    call the page's experiments get the very results. A run that failed, or a page whose
    worker died, runs here and fails as it fails. The workers inherit this process's
    environment (``--seed-offset``'s ``SDPA_SEED_OFFSET``, ``SDPA_PROFILE``,
    ``SDPA_DEVICE``). One page's snippets run here, as they are asked for."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.root: Path | None = None
        self.pickles: dict[str, Path] = {}  # snippet -> the pickle its page's runs will be kept in
        self.taken: set[Path] = set()

    @staticmethod
    def pages(items: list) -> list[str]:
        """The pages whose snippets the selected tests that use ``run_snippet`` read: the
        snippet a test is parametrised with (``test_snippets.py``), else its own page's
        (``tests/test_<page>.py``) and those of the snippets its file names
        (``"derivation/gap_ratio.py"``); a test with neither could read any: every page."""
        includes = {page: snippets for page, snippets in page_includes().items() if snippets}
        page_of = {snippet: page for page, snippets in includes.items() for snippet in snippets}
        named: dict[Path, set[str]] = {}  # test file -> the pages of the snippets it names
        pages: set[str] = set()
        for item in items:
            if "run_snippet" not in getattr(item, "fixturenames", ()):
                continue
            snippet = getattr(getattr(item, "callspec", None), "params", {}).get("snippet")
            if isinstance(snippet, str) and snippet in page_of:
                pages.add(page_of[snippet])
                continue
            if item.path not in named:
                text = item.path.read_text()
                own = item.path.stem.removeprefix("test_").replace("_", "-") + ".md"
                named[item.path] = {page_of[s] for s in page_of if f'"{s}"' in text or f"'{s}'" in text} | (
                    {own} & set(includes))
            if not named[item.path]:
                return sorted(includes)
            pages |= named[item.path]
        return sorted(pages)

    def start(self, pages: list[str]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sdpa-session-runs-"))
        self.pickles = _kept_pickles(self.root, pages)
        command = [sys.executable, "-m", "sitebuild.keep", "--run", str(self.root), "--jobs", PARALLEL_JOBS, *pages]
        with open(self.root / "output.txt", "w") as output:  # a file: a full pipe would stall the workers
            self.process = subprocess.Popen(command, cwd=REPO, stdout=output, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def take(self, snippet: str) -> None:
        """The kept runs of ``snippet``'s page into ``_runs``, once the page is done (none:
        it is not one of the workers' pages, or its worker died)."""
        path = self.pickles.get(snippet)
        if path is None or path in self.taken:
            return
        self.taken.add(path)
        if not _take_pickle(path, self.process):
            status, output = self.finished()
            warnings.warn(f"the snippet workers kept no runs for snippets/{snippet}'s page (exit status {status}); "
                          f"its snippets run here:\n{output[-3000:]}", pytest.PytestWarning, stacklevel=2)

    def finished(self) -> tuple[int, str]:
        """The workers' exit status and what they printed, once they have ended."""
        self.process.wait()
        return self.process.returncode, (self.root / "output.txt").read_text()

    def missing(self) -> list[str]:
        """The snippets of the workers' pages whose runs were not kept (a worker died)."""
        return sorted(snippet for snippet, path in self.pickles.items() if not path.exists())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:  # the session ended first (-x, Ctrl-C)
            os.killpg(self.process.pid, signal.SIGKILL)  # the workers and their forkserver too
            self.process.wait()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


_SNIPPETS = SessionSnippets()


def order_tests(items: list, snippet_workers: bool = False) -> None:
    """Each test waits for as little as can be: first those that need no work from the
    background; then, while the session's build or its snippet workers
    (:class:`SessionSnippets`) run, those whose work started ahead (the snippets are not
    ready yet), or else the snippets here first (the work started ahead goes on beside
    them), with the tests that build a small site of their own before the snippets' tests
    (which wait for the build); then the site's tests; the visits last, page by page (all of
    a page's tests as soon as its visit is in, so that few are left when the last visit is
    done)."""
    building = snippet_workers or any("parallel_site" in names or "built_site" in names
                                      for names in (set(getattr(item, "fixturenames", ())) for item in items))

    def order(item) -> float:
        names = set(getattr(item, "fixturenames", ()))
        if _BACKGROUND & names:
            return 4
        if {"built_site", "parallel_site"} & names:
            return 3
        if SITE_FIXTURES & names:  # a site of its own (small_site), built beside the session's
            return 1.5
        started_ahead, snippets = bool(set(_AHEAD) & names), "run_snippet" in names
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


#: The fast tier's marker expression, as the README gives it.
FAST_TIER = "not site"


def whole_tier(config) -> str:
    """Which whole tier the command runs: ``"all"`` (``python -m pytest``, as the README and
    CI run it), ``"fast"`` (``python -m pytest -m "not site"``), or ``""`` where it selects
    tests (a path, ``-k``, another ``-m``, ``--deselect``, the last failures)."""
    option = config.option
    if (config.args_source is not pytest.Config.ArgsSource.TESTPATHS or option.keyword
            or getattr(option, "deselect", None) or getattr(option, "lf", False) or option.collectonly):
        return ""
    if not option.markexpr:
        return "" if os.environ.get(sdpa_env.BUILT_SITE) else "all"
    return "fast" if option.markexpr.strip() == FAST_TIER else ""


def pytest_sessionstart(session):
    """A whole tier reads every page's snippets, so their runs start now, before the tests
    are collected (three seconds of imports on one core): the site's build for the whole
    suite, the snippet workers for the fast tier."""
    tier = whole_tier(session.config)
    if tier == "all":
        _SESSION.start()
    elif tier == "fast":
        _SNIPPETS.start(sorted(page for page, snippets in page_includes().items() if snippets))


@pytest.hookimpl(tryfirst=True)  # ordered before anything reads the list
def pytest_collection_finish(session):
    """Start the session's build now if a selected test needs the site (and no built site
    was given), else its snippet workers if the selected tests read the snippets of two
    pages or more (:class:`SessionSnippets`): they run in their own processes while the
    tests here run."""
    uses = [set(getattr(item, "fixturenames", ())) for item in session.items]
    given = bool(os.environ.get(sdpa_env.BUILT_SITE))
    builds = any("parallel_site" in names or ({"built_site"} & names and not given) for names in uses)
    pages = [] if builds else SessionSnippets.pages(session.items)
    order_tests(session.items, snippet_workers=len(pages) > 1)
    _SELECTED[:] = session.items
    # What collecting imported (torch, matplotlib, the library: millions of objects) lives
    # as long as the session: out of the garbage collector's scans, which otherwise walk it
    # again at every full collection, and five times over as pytest ends (two seconds).
    gc.freeze()
    if session.config.option.collectonly:
        return
    for fixture, start in _AHEAD.items():
        if any(fixture in names for names in uses):
            _STARTED[fixture] = start()
    if builds:
        if _SESSION.build is None:  # not started with the session
            _SESSION.start()
    elif len(pages) > 1 and _SNIPPETS.process is None:  # not started with the session
        _SNIPPETS.start(pages)


def pytest_unconfigure(config):
    for _, _, stop in _WHEN_BUILT:
        stop()
    _SESSION.stop()
    _SNIPPETS.stop()
    for started in _STARTED.values():  # work started ahead that no test took (-x, -k)
        for part in started if isinstance(started, tuple) else (started,):
            if isinstance(part, subprocess.Popen) and part.poll() is None:
                part.kill()
                part.communicate()


@pytest.fixture(scope="session")
def parallel_site() -> Build:
    """The session's build (:class:`SessionBuild`): its site, whether it ran offline, its
    exit status and everything it printed."""
    return _SESSION.finished()
