"""Shared fixtures: which snippets the pages include, running them, building the site."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
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

#: The variable through which sdpa.runtime adds an offset to every seed.
SEED_OFFSET_ENV = sdpa_env.SEED_OFFSET


def pytest_addoption(parser):
    parser.addoption(
        "--seed-offset", type=int, default=None, metavar="N",
        help="add N to every seed the snippets, the library and the notebook draw "
        f"(sets {SEED_OFFSET_ENV}); with -m claims, reruns every claim on other draws",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "claims: asserts what a page says about a measured (random) quantity; "
        "`pytest -m claims --seed-offset N` reruns these with every seed shifted by N",
    )
    offset = config.getoption("--seed-offset")
    if offset is not None:  # set before any snippet runs; child processes inherit it
        os.environ[SEED_OFFSET_ENV] = str(offset)


def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {
        str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text()) for _, path in fence.includes]
        for page in sorted(DOCS.rglob("*.md"))
    }


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


def _style() -> dict:
    """rcParams that a snippet could leak (the backend is chosen once, by the library)."""
    import matplotlib

    return {k: v for k, v in matplotlib.rcParams.items() if not k.startswith("backend")}


@dataclass
class SnippetRun:
    namespace: dict
    output: str
    leaks: list[str]  # global state the run left behind: changed rcParams, open pyplot figures


_runs: dict[str, SnippetRun] = {}  # by snippet path under snippets/; filled by the build too


def _watched(code: str, filename: str, execute) -> SnippetRun:
    """Run a snippet with the build's executor, noting what global state it leaves behind."""
    import matplotlib.pyplot as plt

    namespace: dict = {}
    style = _style()
    output = execute(code, filename, namespace)
    leaks = (["changed rcParams"] if _style() != style else []) + (
        ["left pyplot figures open"] if plt.get_fignums() else [])
    return SnippetRun(namespace, output, leaks)


def _run(snippet: str) -> SnippetRun:
    """A snippet's run: the one the in-process site build made, else a run now (kept)."""
    if snippet not in _runs:
        from sitebuild.runner import execute

        _runs[snippet] = _watched((SNIPPETS / snippet).read_text(), f"snippets/{snippet}", execute)
    return _runs[snippet]


@pytest.fixture(scope="session")
def run_snippet():
    """Run a snippet once per test session (the build's run when the site was built here)
    and keep its data."""
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
_SELECTED = pytest.StashKey[list]()
_BACKGROUND = {"visit", "parallel_site"}  # fixtures whose work runs beside the tests


def when_site_is_built(fixture: str, start: Callable[[Path, list], None], stop: Callable[[], None]) -> None:
    _WHEN_BUILT.append((fixture, start, stop))


def pytest_collection_modifyitems(config, items):
    """Tests that wait for work in the background (the visits' thread, the parallel build)
    run last: the others run while it works."""
    items.sort(key=lambda item: bool(_BACKGROUND & set(getattr(item, "fixturenames", ()))))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, pytestconfig) -> Path:
    """The whole site, built once per test session into a temporary folder (see
    :func:`_build_site`); then every start registered with :func:`when_site_is_built`."""
    site = _build_site(tmp_path_factory)
    selected = pytestconfig.stash.get(_SELECTED, [])
    for fixture, start, _ in _WHEN_BUILT:
        items = [item for item in selected if fixture in getattr(item, "fixturenames", ())]
        if items:
            start(site, items)
    return site


def _build_site(tmp_path_factory) -> Path:
    """The whole site, built once per test session into a temporary folder.

    The build runs in this process, through MkDocs' own API, with ``SDPA_JOBS=1`` (every
    snippet here, one after another): the experiments that the library memoises are
    computed once for the build and the tests together, and each snippet's run is kept
    for ``run_snippet``. ``SDPA_BUILT_SITE=<folder>`` takes a site you built yourself
    instead (to iterate on the site's tests without rebuilding; never set in CI).
    """
    if os.environ.get(sdpa_env.BUILT_SITE):
        return Path(os.environ[sdpa_env.BUILT_SITE]).resolve()
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from sitebuild import runner

    def execute(code: str, filename: str, namespace: dict | None = None) -> str:
        snippet = filename.removeprefix("snippets/")
        run = _watched(code, filename, original)
        if (SNIPPETS / snippet).is_file() and (SNIPPETS / snippet).read_text() == code:
            _runs.setdefault(snippet, run)
        return run.output

    site = tmp_path_factory.mktemp("site")
    saved = {key: os.environ.get(key) for key in (sdpa_env.CACHE, sdpa_env.JOBS, "NO_MKDOCS_2_WARNING")}
    os.environ.pop(sdpa_env.CACHE, None)
    os.environ.update({sdpa_env.JOBS: "1", "NO_MKDOCS_2_WARNING": "1"})
    cwd, original, runner.execute = Path.cwd(), runner.execute, execute
    os.chdir(REPO)
    try:
        config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(site))
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    finally:
        os.chdir(cwd)
        runner.execute = original
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return site


# ---- the parallel build, in the background from the start of the session -------------

PARALLEL_JOBS = "2"
#: The parallel build runs at a lower priority than the tests: the in-process build and
#: then the page visits are the session's longest chain, and on a machine with few cores
#: the parallel build's workers would otherwise take turns with them (it then uses the
#: CPU they leave, and is read by a test that runs last).
BACKGROUND_NICENESS = 10
_PARALLEL = pytest.StashKey[tuple]()  # (the build's process, its site folder, whether offline)


@dataclass
class Build:
    site: Path
    offline: bool
    returncode: int
    output: str


def pytest_collection_finish(session):
    """Start the parallel build now if a selected test reads it: it runs in its own
    processes while the tests here run."""
    session.config.stash[_SELECTED] = list(session.items)
    if not any("parallel_site" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    site = Path(tempfile.mkdtemp(prefix="sdpa-parallel-site-"))
    offline = network_can_be_cut()
    command, env = mkdocs_process("build", "--clean", "-d", str(site), offline=offline,
                                  **{sdpa_env.JOBS: PARALLEL_JOBS})
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, preexec_fn=lambda: os.nice(BACKGROUND_NICENESS), start_new_session=True)
    session.config.stash[_PARALLEL] = (process, site, offline)


def pytest_unconfigure(config):
    for _, _, stop in _WHEN_BUILT:
        stop()
    process, site, _ = config.stash.get(_PARALLEL, (None, None, None))
    if process is not None and process.poll() is None:  # the session ended first (-x, Ctrl-C)
        # The whole process group: its workers and their forkserver hold its output open.
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    if site is not None:
        shutil.rmtree(site, ignore_errors=True)



@pytest.fixture(scope="session")
def parallel_site(pytestconfig) -> Build:
    """A clean ``mkdocs build`` in a fresh process with ``SDPA_JOBS=2`` (its snippets and
    notebook in worker processes), with the network cut where the OS allows it; started
    when the session's tests were collected."""
    process, site, offline = pytestconfig.stash[_PARALLEL]
    output = process.communicate(timeout=900)[0]
    return Build(site, offline, process.returncode, output)
