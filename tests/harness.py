"""The test session reads the store: every snippet runs once, into it, and each test reads its run.

A pytest plugin (``tests/conftest.py`` loads it; ``tests/builds.py`` is the session's site). Each
test declares the pages whose snippets it reads (its file's: ``tests/test_failure_modes.py`` for
``docs/failure-modes.md``; a ``snippet`` or ``page`` parameter's; ``@pytest.mark.pages``). What the
store lacks of them runs once, in two workers (the session's site build, else ``python -m
sitebuild.execute PAGE ...``), before the test; with ``--only-read`` (a sweep of one test) a snippet
runs alone when a test reads it. An undeclared page, a name a run lacks, a snippet that failed (a
failure stored before this session runs again): each fails the test, saying why."""

from __future__ import annotations

import functools
import gc
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS, SNIPPETS, LIBRARY = REPO / "docs", REPO / "snippets", "sdpa"
sys.path[:0] = [str(path) for path in (SNIPPETS, REPO) if str(path) not in sys.path]

from sdpa import env  # noqa: E402  (the environment, read and written; imports no torch)
from sitebuild import execute  # noqa: E402
from sitebuild.execute import SnippetError, SnippetFailure  # noqa: E402
from sitebuild.fences import executed_fences  # noqa: E402
from builds import start  # noqa: E402

WORKERS = "2"  # the session's worker processes: the machine's two cores
_config: list = [None]


def pytest_addoption(parser):
    parser.addoption("--seed-offset", type=int, default=None, metavar="N", help="add N to every seed the snippets, "
                     f"the library and the notebook draw (sets {env.SEED_OFFSET}); with -m claims, reruns every claim")
    parser.addoption("--only-read", action="store_true", help="run only the snippets the tests read, each when read")


def pytest_configure(config):
    for marker in ("claims: asserts what a page says about a measured (random) quantity; `pytest -m claims "
                   "--seed-offset N` reruns these with every seed shifted by N",
                   "profiles(*names): a claim only these profiles' sizes support (`quick`, `full`)",
                   "pages(*pages): the pages whose snippets the test reads, besides its file's own"):
        config.addinivalue_line("markers", marker)
    if config.getoption("--seed-offset") is not None:  # before any snippet runs; the processes started here inherit it
        env.export(**{env.SEED_OFFSET: str(config.getoption("--seed-offset"))})
    env.export(**{env.STORE: str(execute.store())})  # this process's engine runs, and its children's
    _config[0] = config


def say(line: str) -> None:
    """A line of the session's own (what it starts, what a test waits for)."""
    terminal = _config[0] and _config[0].pluginmanager.get_plugin("terminalreporter")
    if terminal:
        terminal.write_line(f"[harness] {line}")


@functools.cache
def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text()) for _, path in
                                          fence.includes] for page in sorted(DOCS.rglob("*.md"))}


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


def page_of(snippet: str) -> str | None:
    return next((page for page, snippets in page_includes().items() if snippet in snippets), None)


def declared_pages(item) -> set[str]:
    """The pages (with snippets) whose snippets the test ``item`` reads."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    pages = {item.path.stem.removeprefix("test_").replace("_", "-") + ".md", params.get("page"),
             page_of(params["snippet"]) if isinstance(params.get("snippet"), str) else None}
    pages.update(page for marker in item.iter_markers("pages") for page in marker.args)
    return {page for page in pages if isinstance(page, str) and page_includes().get(page)}


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
        raise KeyError(f"snippets/{self.snippet}'s stored run has no {name!r}: it is no name the snippet defined, or "
                       "its value could not be pickled (cloudpickle), or it is a module")


class Session:
    """The snippets' runs of this session, and the one process that makes what the store lacks."""

    def __init__(self) -> None:
        self.plan = execute.Plan({}, {}, execute.code(), execute.device(), execute.store())
        self.runs: dict[str, SnippetRun] = {}
        self.root, self.started = Path(tempfile.mkdtemp(prefix="sdpa-session-")), time.time()
        self.process: subprocess.Popen | None = None  # the build, or python -m sitebuild.execute
        self.build = None  # when that process builds the site: a builds.Build

    @functools.cache  # noqa: B019 - one session
    def record(self, snippet: str) -> Path:
        source = (SNIPPETS / snippet).read_text(encoding="utf-8")
        return self.plan.record(execute.Snippet(page_of(snippet) or "", f"snippets/{snippet}", source))

    def missing(self, pages) -> list[str]:
        """The pages (or snippets, ``x/y.py``) whose runs the store lacks (an older session's failure: none)."""
        def ran(path: Path) -> bool:
            return path.exists() or (failed := execute.failed(path)).exists() and failed.stat().st_mtime >= self.started

        return sorted(page for page in pages if not all(ran(self.record(s)) for s in page_includes().get(page, [page])))

    def start(self, command: list[str], **changes: str) -> None:
        self.process = start(command, self.root / "output.txt", env=env.environment(changes))

    def run_pages(self, pages: list[str]) -> None:
        if pages:
            say(f"running the snippets of {', '.join(pages)} in two workers (the store lacks them)")
            named = [f"--snippet={page}" if page.endswith(".py") else page for page in pages]
            self.start([sys.executable, "-m", "sitebuild.execute", "--jobs", WORKERS, *named])

    def output(self) -> str:
        return (self.root / "output.txt").read_text(errors="replace") if self.process else ""

    def wait_for(self, page: str) -> None:
        """Until the store holds the runs of ``page``'s snippets, or of a snippet ``x/y.py`` (started if none runs)."""
        where = f"snippets/{page}" if page.endswith(".py") else f"the snippets of docs/{page}"
        if not self.missing([page]):
            return
        if self.process is None or (self.process.poll() is not None and self.build is None):
            self.run_pages([page])
        waited, told = time.monotonic(), 0
        while self.missing([page]) and self.process.poll() is None:
            time.sleep(0.05)
            if (seconds := time.monotonic() - waited) > told + 10:
                told = seconds
                say(f"waiting {seconds:.0f} s for {where}")
        if self.missing([page]):
            pytest.fail(f"the session's run ended (exit status {self.process.returncode}) without the runs of "
                        f"{where}. What it printed:\n{self.output()[-4000:]}", pytrace=False)

    def run_snippet(self, snippet: str, item) -> SnippetRun:
        page = page_of(snippet)
        if page is None:
            raise LookupError(f"snippets/{snippet}: no page includes it")
        if item is not None and page not in declared_pages(item):
            pytest.fail(f'{item.nodeid} reads snippets/{snippet} but does not declare its page: mark it '
                        f'@pytest.mark.pages("{page}") (tests/harness.py)', pytrace=False)
        if snippet not in self.runs:
            self.wait_for(snippet if _config[0].getoption("--only-read") else page)
            record = execute.read(path := self.record(snippet), self.started)
            failure = SnippetFailure(**record["failure"]) if record["failure"] else None
            data = {} if failure else pickle.loads(path.with_suffix(".pickle").read_bytes())
            self.runs[snippet] = SnippetRun(KeptNamespace(data, snippet), record["output"], record["leaks"], failure,
                                            record["trained"])
            gc.freeze()  # the runs live as long as the session: out of the collector's scans
        if (run := self.runs[snippet]).failure is not None:
            error = SnippetError(run.failure)
            error.add_note(run.failure.traceback)
            raise error
        return run


SESSION = Session()
_current: list = [None]  # the test being set up or run, for run_snippet's check


@pytest.fixture(scope="session")
def run_snippet():
    """``run_snippet("derivation/score_std.py")``: that snippet's run, from the store."""
    return lambda snippet: SESSION.run_snippet(snippet, _current[0])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _current[0] = item
    marker = item.get_closest_marker("profiles")
    if marker is not None and env.profile() not in marker.args:
        pytest.skip(f"a claim of the {' and '.join(marker.args)} profile's experiment sizes; this run's profile "
                    f"is {env.profile()} (set SDPA_PROFILE)")
    for page in sorted(declared_pages(item)) if not item.config.getoption("--only-read") else []:
        SESSION.wait_for(page)
