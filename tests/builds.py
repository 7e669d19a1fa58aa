"""The site's part of the test session: the session's build (a fixture), a site built
beforehand (``SDPA_BUILT_SITE``), and the work that overlaps the tests: started ahead
(:func:`run_ahead`) or once the site is built (:func:`when_site_is_built`), the tests ordered
so that it does (:func:`order_tests`). A pytest plugin (``tests/conftest.py`` loads it), and
the processes the session starts (:func:`start`), which die with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sdpa import env

REPO = Path(__file__).resolve().parents[1]
FAST_TIER = "not site"  # the fast tier's marker expression, as the README gives it
SITE_FIXTURES = {"built_site", "parallel_site", "small_site"}  # a test using one is in the ``site`` tier


def pytest_configure(config):
    config.addinivalue_line("markers", f"site: uses {' or '.join(sorted(SITE_FIXTURES))} (a site of real "
                            f"snippets); `pytest -m '{FAST_TIER}'` is the fast tier")


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process as soon as ``parent`` (its parent's pid before the
    fork) ends: Linux's ``PR_SET_PDEATHSIG`` (1); a no-op elsewhere. For the session's processes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # it ended before this process could ask
        os._exit(1)


def start(command: list[str], output: Path | None = None, **options) -> subprocess.Popen:
    """A process in a group of its own (stopped with its workers) that dies with this one."""
    with open(output or os.devnull, "w") as sink:
        return subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=functools.partial(die_with_parent, os.getpid()), **options)


def stop(process: subprocess.Popen | None) -> None:
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


def build_site(session) -> None:
    """Start the session's clean build of the whole site (offline where the OS allows)."""
    from harness import WORKERS, say

    say(f"building the site in two workers (what the store lacks runs first); {env.BUILT_SITE}=<folder> tests "
        "a site you built instead")
    session.build = Build(session.root / "site", network_can_be_cut(), -1, "")
    session.start(mkdocs_process("build", "--clean", "-d", str(session.build.site), offline=session.build.offline)[0],
                  NO_MKDOCS_2_WARNING="1", **{env.JOBS: WORKERS})


def built(session) -> Build:
    """The session's build, once it has ended (started now if no test foresaw it)."""
    if session.build is None:
        stop(session.process)  # a run of pages alone: the build runs what is left of it
        build_site(session)
    if session.build.returncode == -1:
        session.process.wait(timeout=3600)
        session.build.returncode, session.build.output = session.process.returncode, session.output()
    return session.build


def check_built_site(site: Path) -> list[str]:
    """What differs between the digests a built site records and the checkout's."""
    from mkdocs.config import load_config

    from sitebuild import report

    try:
        recorded = json.loads((site / "build-report.json").read_text())["digests"]
    except (OSError, ValueError, KeyError):
        return [f"{site} holds no build-report.json with the digests it was built from"]
    with contextlib.chdir(REPO):
        current = report.digests(load_config(str(REPO / "mkdocs.yml")), _session().plan)
    return [f"its {name}: {recorded.get(name)} against the checkout's {value}"
            for name, value in current.items() if recorded.get(name) != value]


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The whole site, built once per session (or ``SDPA_BUILT_SITE``'s, if it is the checkout's)."""
    site = env.built_site()
    if site is not None and (differ := check_built_site(site)):
        pytest.fail(f"{env.BUILT_SITE}={site} was built from other code than this checkout's: build it again "
                    "(mkdocs build -d <folder>) or unset the variable.\n" + "\n".join(differ), pytrace=False)
    if site is None and (build := built(_session())).returncode != 0:
        pytest.fail(f"the site did not build:\n{build.output[-6000:]}", pytrace=False)
    site = site or _session().build.site
    for fixture, start_work, _ in _WHEN_BUILT if not _BUILT else []:  # the work waiting for the site, once
        if items := [item for item in _SELECTED if fixture in getattr(item, "fixturenames", ())]:
            start_work(site, items)
    _BUILT.append(site)
    return site


@pytest.fixture(scope="session")
def parallel_site():
    """The session's build: its site, whether it ran offline, its exit status and output."""
    return built(_session())


def mkdocs_process(*args: str, engine: str = "mkdocs", offline: bool = False, **changes: str) -> tuple[list, dict]:
    """A fresh ``mkdocs`` (or ``properdocs``) process's command and environment, as the README
    runs it; ``offline``: in a network namespace with loopback alone (``unshare -rn``)."""
    script = Path(sys.executable).with_name(engine)
    command = [sys.executable, *([str(script)] if script.is_file() else ["-m", engine]), *args]
    if offline:
        command = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]
    return command, env.environment({"NO_MKDOCS_2_WARNING": "1", **changes})


@functools.cache
def network_can_be_cut() -> bool:
    with contextlib.suppress(FileNotFoundError):
        return subprocess.run(["unshare", "-rn", "sh", "-c", "ip link set lo up"], capture_output=True).returncode == 0
    return False


#: (fixture, start, stop): ``start(site, items)`` runs once the site is built, with the
#: selected tests that use ``fixture``; ``stop()`` as the session ends (the page visits).
_WHEN_BUILT: list = []
_SELECTED: list = []
_BUILT: list[Path] = []
_AHEAD: dict = {}  # fixture -> start(): work started once the tests are collected, if one uses it
_STARTED: dict = {}


def when_site_is_built(fixture: str, start_work, stop_work) -> None:
    _WHEN_BUILT.append((fixture, start_work, stop_work))


def run_ahead(fixture: str, start_work) -> None:
    _AHEAD[fixture] = start_work


def ahead(fixture: str, start_work) -> object:
    """What ``start_work()`` returned when the session began, or (not started) what it returns now."""
    return _STARTED.pop(fixture) if fixture in _STARTED else start_work()


def order_tests(items: list) -> None:
    """Those that need nothing first, then those whose work started ahead or that build a small
    site, those that read snippets, the site's, then the visits, page by page as they come in."""
    from harness import declared_pages

    def order(item) -> int:
        names = set(getattr(item, "fixturenames", ()))
        return (4 if "visit" in names else 3 if {"built_site", "parallel_site"} & names else 2
                if declared_pages(item) else 1 if (SITE_FIXTURES | set(_AHEAD)) & names else 0)

    def params(item) -> tuple:
        return tuple(sorted(getattr(getattr(item, "callspec", None), "params", {}).items()))

    first: dict = {}
    for position, item in enumerate(items):
        if "visit" in getattr(item, "fixturenames", ()):
            first.setdefault(params(item), position)
    items.sort(key=lambda item: (order(item), first.get(params(item), 0) if order(item) == 4 else 0))


def _session():
    from harness import SESSION

    return SESSION


def _includes() -> dict:
    from harness import page_includes

    return page_includes()


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
    tier = whole_tier(session.config)
    if tier == "all":
        build_site(_session())
    elif tier == "fast":
        _session().run_pages(_session().missing(page for page, found in _includes().items() if found))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if SITE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.site)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    """Order the tests; start the work of a fixture they use ahead; if no whole tier started
    it, start what they need: the site's build, or their pages' runs."""
    from harness import declared_pages

    order_tests(session.items)
    _SELECTED[:] = session.items
    uses = [set(getattr(item, "fixturenames", ())) for item in session.items]
    gc.freeze()  # what collecting imported lives as long as the session: out of the collector's scans
    if session.config.option.collectonly:
        return
    _STARTED.update({fixture: go() for fixture, go in _AHEAD.items() if any(fixture in names for names in uses)})
    if _session().process is None:
        if any("parallel_site" in names or "built_site" in names and not env.built_site() for names in uses):
            build_site(_session())
        elif not session.config.getoption("--only-read"):  # with it, each snippet runs when read
            _session().run_pages(_session().missing(set().union(*map(declared_pages, session.items))))


def pytest_unconfigure(config):
    stop(_session().process)
    for _, _, stop_work in _WHEN_BUILT:
        stop_work()
    for started in _STARTED.values():  # work started ahead that no test took (-x, -k)
        for part in started if isinstance(started, tuple) else (started,):
            if isinstance(part, subprocess.Popen):
                stop(part)
