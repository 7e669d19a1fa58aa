"""Execute, then render: the site's snippets run here, into the one store the build and the tests read.

``python -m sitebuild.execute [--store DIR] [--jobs N] [PAGE.md ...]`` runs what the store
(``SDPA_STORE``, else ``.cache/store``) lacks of the pages named (default: all, and the lab
notebook) in worker processes, a line as each page is done; ``mkdocs build`` and ``serve``
start the same step first (``hooks.py``), then only read the store, as the tests do. It
holds ``snippets/<key>.json`` (what a snippet printed, the state it left behind, the loops
that trained it, its seconds and context) and ``.pickle`` (its data), or ``<key>.failed.json``
(how it failed: shown, never kept as a result, so it runs again at the next build),
``notebooks/<key>.json`` (a notebook page, executed) and ``memo/`` (the engines' runs,
``sdpa.runtime.memo``). A key
hashes a snippet's file and source, the code that runs it (the library and :data:`KEYED`)
and the run's context (``sdpa.env.run_context``); a notebook's, its converter's settings and
versions too. A key names the code its run imported: each run happens in a worker started
for the call (from a forkserver that imported torch, numpy and matplotlib, nothing of the
site), which checks the code's files against the keys' before each run and before it
writes (:func:`_unchanged`); a run under which a file changed stores nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import importlib.util
import inspect
import json
import linecache
import logging
import multiprocessing
import os
import re
import select
import sys
import threading
import time
import traceback
import types
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Callable

from sdpa import env
from sitebuild import LIBRARY_ROOT

REPO = LIBRARY_ROOT.parent
BUILD = Path(__file__).resolve().parent
#: The build's modules a worker imports (a test checks it imports no other).
KEYED = (BUILD / "__init__.py", BUILD / "execute.py")
FORMAT = "1"  # what a record holds; a new format makes new keys
#: The packages that execute a notebook and write its page (their versions are in its key).
CONVERTING = ("mkdocs-jupyter", "nbconvert", "nbclient", "ipykernel", "jupytext")


def store() -> Path:
    return env.store() or REPO / ".cache" / "store"


def code() -> str:
    """The digest of the code a run depends on (the library and :data:`KEYED`), read now."""
    return env.code_digest(env.LIBRARY, *KEYED)


def device() -> str:
    """``sdpa.runtime.device()``'s answer, without importing torch where ``SDPA_DEVICE`` is set
    or ``torch/version.py`` shows a build without CUDA or ROCm."""
    spec = importlib.util.find_spec("torch")
    built = Path(spec.origin).with_name("version.py").read_text() if spec and spec.origin else ""
    if env.wanted_device() or not re.search(r"^(cuda|hip)\b[^=\n]*=\s*['\"]", built, re.M):
        return env.wanted_device() or "cpu"
    from sdpa.runtime import device as runtime_device

    return str(runtime_device())


def _digest(*parts: str) -> str:
    return hashlib.sha256(b"\0".join(part.encode() for part in (FORMAT, *parts))).hexdigest()


@dataclass(frozen=True)
class Snippet:
    page: str  # the page that runs it, under docs/
    file: str  # as its fence's title names it: snippets/<page>/<name>.py
    source: str

    def key(self, code: str, device: str) -> str:
        return _digest(self.file, self.source, code, repr(env.run_context(device)))


@dataclass
class Plan:
    """What a build (or a call) runs: the pages' snippets, the notebooks, and the keys."""

    jobs: dict[str, list[Snippet]]  # page -> its snippets, in order
    notebooks: dict[str, tuple[str, dict]]  # notebook page -> (its path, mkdocs-jupyter's arguments)
    code: str
    device: str
    folder: Path

    def record(self, snippet: Snippet) -> Path:
        return self.folder / "snippets" / f"{snippet.key(self.code, self.device)}.json"

    def notebook(self, path: str, kwargs: dict) -> Path:
        key = _digest(Path(path).read_text(encoding="utf-8"), self.code, repr(env.run_context(self.device)),
                      repr(sorted(kwargs.items())), repr([version(package) for package in CONVERTING]))
        return self.folder / "notebooks" / f"{key}.json"


def fenced_snippets(markdown: str, page: str, bases: list[Path]) -> list[tuple]:
    """Each executed fence of a page with the snippet it runs, in order (a fence that does not
    include one file and name it runs none, and fails its page: ``sitebuild/fences.py``)."""
    from sitebuild.fences import executed_fences  # here, not in the workers: it is not in their key

    found = []
    for fence in executed_fences(markdown):
        paths = [base / fence.includes[0][1] for base in bases] if len(fence.includes) == 1 else []
        path = next((path for path in paths if path.is_file()), None)
        if path is not None and len(fence.titles) == 1:
            found.append((fence, Snippet(page, fence.titles[0], path.read_text(encoding="utf-8"))))
    return found


def snippet_bases(config) -> list[Path]:
    """The folders pymdownx.snippets reads includes from."""
    bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", ["snippets"])
    return [Path(base).resolve() for base in ([bases] if isinstance(bases, str) else bases)]


def notebooks(config) -> dict[str, tuple[str, dict]]:
    """The notebook pages written as Jupytext scripts (``docs/lab.py``), each with the
    arguments mkdocs-jupyter gives ``convert.nb2html`` (its settings of the same names)."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return {}
    from mkdocs_jupyter import convert

    kwargs = {name: plugin.config[name] for name in inspect.signature(inspect.unwrap(convert.nb2html)).parameters
              if name in plugin.config}
    found = {path for pattern in plugin.config["include"] for path in Path(config.docs_dir).glob(pattern)}
    return {path.relative_to(config.docs_dir).as_posix(): (str(path), kwargs)
            for path in sorted(found) if path.suffix == ".py"}


def plan(config, pages: list[str] | None = None) -> Plan:
    """The plan for the pages of ``config`` (``pages``: those alone), its keys read now."""
    docs, bases = Path(config.docs_dir), snippet_bases(config)
    names = pages or sorted(path.relative_to(docs).as_posix() for path in docs.rglob("*.md"))
    markdown = {name: (docs / name).read_text(encoding="utf-8") for name in names if name.endswith(".md")}
    snippets = {name: [s for _, s in found] for name, text in markdown.items()
                if (found := fenced_snippets(text, name, bases))}
    books = {page: args for page, args in notebooks(config).items()
             if args[1].get("execute") and (not pages or page in pages)}
    return Plan(snippets, books, code(), device(), store())


# ---- one snippet's run ----------------------------------------------------------------


@dataclass(frozen=True)
class SnippetFailure:
    snippet: str  # the file, as the fence's title names it
    line: int | None  # the snippet's line that was running
    error: str  # "ZeroDivisionError: division by zero"
    traceback: str

    @property
    def where(self) -> str:
        """``snippets/<page>/<name>.py, line N`` (the file alone where no line is known)."""
        return f"{self.snippet}, line {self.line}" if self.line else self.snippet

    def message(self, page: str) -> str:
        return f"snippet failed: {self.where} (page docs/{page}): {self.error}\n{self.traceback}"


class SnippetError(Exception):
    """A snippet raised: ``snippets/<page>/<name>.py, line 4: ZeroDivisionError: division by
    zero``, so the last line of a traceback (pytest's) says where."""

    def __init__(self, failure: SnippetFailure):
        super().__init__(f"{failure.where}: {failure.error}")
        self.failure = failure


def _failed(error: BaseException, filename: str) -> SnippetError:
    """``error``, raised by code compiled as ``filename``, as a :class:`SnippetError` whose
    traceback ends on the snippet's last line that ran (what pytest prints last)."""
    frames, tb = [], error.__traceback__.tb_next if error.__traceback__ else None  # the executor's frame dropped
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    ours = [i for i, tb in enumerate(frames) if tb.tb_frame.f_code.co_filename == filename]
    lines = [frames[i].tb_lineno for i in ours]
    if isinstance(error, SyntaxError) and error.filename == filename:
        lines.append(error.lineno)
    cut = None
    for tb in reversed(frames[: ours[-1] + 1] if ours else []):
        cut = types.TracebackType(cut, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__.tb_next)).rstrip()
    failure = SnippetFailure(filename, lines[-1] if lines else None,
                             traceback.format_exception_only(type(error), error)[-1].strip(), text)
    return SnippetError(failure).with_traceback(cut)


def execute(code: str, filename: str, namespace: dict | None = None) -> str:
    """Run one snippet in a fresh module named after ``filename``; what it printed (``print``
    alone, as markdown-exec captures). Raises :class:`SnippetError`, naming file and line;
    ``namespace`` receives the module's globals."""
    chunks: list[str] = []

    def captured_print(*texts, end: str = "\n", **_) -> None:
        chunks.append(" ".join(str(text) for text in texts) + end)

    name = "snippet_" + "".join(c if c.isalnum() else "_" for c in filename)
    module = types.ModuleType(name)  # dataclasses look their class's module up in sys.modules
    module.__dict__["print"] = captured_print
    sys.modules[name] = module
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # traceback lines
    try:
        exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - running snippets is the job
    except Exception as error:  # noqa: BLE001 - any failure of the snippet is reported
        raise _failed(error, filename) from error
    finally:
        del sys.modules[name]
        linecache.cache.pop(filename, None)
        if namespace is not None:
            namespace.update(module.__dict__)
    return "".join(chunks)


def run(snippet: Snippet) -> tuple[dict, bytes]:
    """One snippet's record (what it printed, its failure, the global state it left behind,
    its seconds and context) and its namespace pickled, less its imports and what
    cloudpickle cannot write (what it defines goes by value: its module is gone)."""
    import cloudpickle
    import matplotlib
    import matplotlib.pyplot as plt

    def style() -> dict:
        return {k: v for k, v in matplotlib.rcParams.items() if not k.startswith("backend")}

    namespace: dict = {}
    before, start = style(), time.perf_counter()
    with _loops(snippet.source) as trained:
        try:
            output, failure = execute(snippet.source, snippet.file, namespace), None
        except SnippetError as error:
            output, failure = "", error.failure
    seconds = round(time.perf_counter() - start, 3)
    leaks = ["changed rcParams"] * (style() != before) + ["left pyplot figures open"] * bool(plt.get_fignums())
    data = {}
    for name, value in namespace.items():
        if not name.startswith("__") and name != "print" and not isinstance(value, types.ModuleType):
            try:
                cloudpickle.dumps(value)
                data[name] = value
            except Exception:  # noqa: BLE001, S112 - it stays behind (a reader asking for it fails, saying so)
                continue
    return ({"snippet": snippet.file, "page": snippet.page, "output": output, "leaks": leaks, "seconds": seconds,
             "failure": asdict(failure) if failure else None, "trained": sorted(trained), "device": device(),
             "torch": version("torch"), "profile": env.profile()}, cloudpickle.dumps(data))


TRAINS = re.compile(r"^\s*(?:import|from)\s+(?:sdpa|torch)\b", re.M)


def _loops(source: str):
    """``sdpa.runtime.loops()`` for a snippet that may train (it imports the library or
    torch): the loops that step an optimiser while it runs; else an empty set."""
    if not TRAINS.search(source):
        return contextlib.nullcontext(set())
    from sdpa import runtime

    runtime.on_part = functools.partial(_tell, "part")
    return runtime.loops()


def failed(record: Path) -> Path:
    """Where the failure of the snippet whose record is ``record`` is written."""
    return record.with_suffix(".failed.json")


def read(record: Path, since: float = 0.0) -> dict | None:
    """The snippet's record, else its failure if written since ``since`` (a time), else None."""
    for path in (record, failed(record)):
        with contextlib.suppress(OSError, ValueError):
            if path == record or path.stat().st_mtime >= since:
                return json.loads(path.read_text())
    return None


# ---- the workers ------------------------------------------------------------------------


class CodeChanged(RuntimeError):
    """The library or build code changed on disk after the keys were computed."""


def _unchanged(expected: str) -> None:
    if code() != expected:
        raise CodeChanged(f"{env.LIBRARY} or {BUILD} changed while the snippets ran: nothing of that run is "
                          "stored; run again")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(path)


def _snippet_job(snippet: Snippet, path: Path, expected: str) -> float:
    """A worker's job: one snippet whose record is missing, its record written when it is
    done. A worker runs many such jobs, so what the library memoises per process is shared
    by the snippets it runs."""
    if path.exists():  # another process has run it meanwhile
        return 0.0
    _tell("start", snippet.file)
    _unchanged(expected)
    record, data = run(snippet)
    _unchanged(expected)
    if record["failure"] is not None:
        _write(failed(path), json.dumps(record).encode())
        return record["seconds"]
    _write(path.with_suffix(".pickle"), data)
    _write(path, json.dumps(record).encode())
    failed(path).unlink(missing_ok=True)
    return record["seconds"]


def _notebook_job(notebook: str, kwargs: dict, path: Path, expected: str, name: str) -> float:
    """A worker's job: mkdocs-jupyter's own conversion of a notebook page, executed (its kernel
    on local IPC sockets, ``sitebuild/jupyter/``: no warning of TCP without encryption)."""
    from mkdocs_jupyter import convert

    _tell("start", name)
    env.prepend_path("JUPYTER_CONFIG_PATH", str(BUILD / "jupyter"))
    _unchanged(expected)
    start = time.perf_counter()
    html = inspect.unwrap(convert.nb2html)(notebook, **kwargs)
    seconds = round(time.perf_counter() - start, 3)
    _unchanged(expected)
    _write(path, json.dumps({"html": html, "seconds": seconds, "device": device(), "torch": version("torch"),
                             "profile": env.profile()}).encode())
    return seconds


_messages: list = []  # a worker's queue to the process that started it


def _tell(*message) -> None:
    """Tell the process that started this worker what it does (a job started, a part done)."""
    if _messages:
        _messages[0].put((*message, time.monotonic()))


def _enter(environment: dict[str, str], owner: int, messages) -> None:
    """A worker's first act: take the environment of ``owner``, which started it, and end
    when it ends (a thread waits on its pidfd: Linux 5.3 or later)."""
    env.replace(environment)
    _messages[:] = [messages]
    try:
        pidfd = os.pidfd_open(owner)
    except ProcessLookupError:  # it has ended already
        os._exit(1)
    except (AttributeError, OSError):
        return

    def end() -> None:
        select.select([pidfd], [], [])
        os._exit(1)

    threading.Thread(target=end, daemon=True).start()


def preload(sources: list[str]) -> list[str]:
    """What the forkserver imports: torch, numpy and matplotlib if a snippet imports them or
    the library (a test's throwaway site needs none); and ``json``, for a list that is not
    empty hands the forkserver ``sys.path``, where the workers find this package."""
    heavy = re.compile(r"^\s*(?:import|from)\s+(?:sdpa|torch|numpy|matplotlib)\b", re.M)
    return ["json", "numpy", "torch", "matplotlib"] if any(map(heavy.search, sources)) else ["json"]


#: The last full build's record (``scripts/benchmark.py --full``): its seconds per job.
LAST_FULL_BUILD = REPO / "bench" / "records" / "full-build.json"


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


class Run:
    """What the store lacks of a plan, running in ``jobs`` (``SDPA_JOBS``, one per core) worker
    processes, a job per snippet (and per notebook), the slowest first (never timed, then by
    their seconds last time in this store, else in the last full build's record), with its
    :class:`Progress`; a reader of the store waits for the record it needs (:meth:`wait`).
    The runs that several snippets share are split between the workers that ask for them
    (``sdpa.runtime.each``)."""

    def __init__(self, plan: Plan, jobs: int | None = None, say: Callable[[str], None] = print,
                 every: float = 30.0):
        stale = {page: [(snippet, path) for snippet in snippets if not (path := plan.record(snippet)).exists()]
                 for page, snippets in plan.jobs.items()}
        stale = {page: todo for page, todo in stale.items() if todo}
        books = {page: path for page, args in plan.notebooks.items() if not (path := plan.notebook(*args)).exists()}
        self.folder, self.pending, self.pool, self.progress = plan.folder, {}, None, None
        self.pages = set(stale) | set(books)  # the pages whose runs start now
        if not stale and not books:
            return
        self.seconds = read_json(plan.folder / "seconds.json")
        # an empty store (the publishing workflow's) orders its jobs by the last full build's
        earlier = {**read_json(LAST_FULL_BUILD).get("seconds", {}), **self.seconds}
        # (page, name, snippet and its record) per job; a notebook's name is its page
        todo = [(page, snippet.file, (snippet, path)) for page, found in stale.items() for snippet, path in found]
        todo += [(page, page, None) for page in books]
        todo.sort(key=lambda job: (job[1] in earlier, -earlier.get(job[1], 0)))
        size = max(1, min(jobs or env.jobs() or len(os.sched_getaffinity(0)), len(todo)))
        say(f"Executing {sum(map(len, stale.values()))} snippet(s) of {len(stale)} page(s)"
            + (f" and {len(books)} notebook(s)" if books else "")
            + f" in {size} worker(s), into {plan.folder} ({len(plan.jobs) - len(stale)} page(s) there already)")
        context = multiprocessing.get_context("forkserver")
        if str(REPO) not in sys.path:  # workers import this package by name
            sys.path.append(str(REPO))
        context.set_forkserver_preload(preload([s.source for found in stale.values() for s, _ in found]))
        messages, environment = context.SimpleQueue(), env.environment({env.STORE: str(plan.folder)})
        self.pool = ProcessPoolExecutor(size, mp_context=context, initializer=_enter,
                                        initargs=(environment, os.getpid(), messages))
        self.progress = Progress([name for _, name, _ in todo], earlier, size, messages, say, every)
        left = {page: len(found) for page, found in stale.items()} | dict.fromkeys(books, 1)
        took = dict.fromkeys(left, 0.0)

        def said(page: str, name: str, future) -> None:  # as each job is done, a line per page
            if future.exception() is None:
                self.seconds[name] = round(future.result(), 3)
                took[page] += future.result()
                left[page] -= 1
                self.progress.done(name, "" if left[page] else f"docs/{page}: " + (
                    "the notebook" if page in books else f"{len(stale[page])} snippet(s)") + f" in {took[page]:.1f} s")

        for page, name, job in todo:
            if job is None:
                future = self.pool.submit(_notebook_job, *plan.notebooks[page], books[page], plan.code, page)
                self.pending[books[page]] = future
            else:
                future = self.pool.submit(_snippet_job, *job, plan.code)
                self.pending[job[1]] = future
            future.add_done_callback(functools.partial(said, page, name))

    def wait(self, path: Path) -> None:
        """Until the record ``path`` is written, if this run writes it (raising what its worker raised)."""
        if path in self.pending:
            self.pending[path].result()

    def close(self, failed: bool = False) -> set[Path]:
        """Wait for the workers (raising what one raised) or, after a failure, stop them; the
        records this run wrote."""
        try:
            for future in set(self.pending.values()) if self.pool is not None and not failed else []:
                future.result()
        except BaseException:
            failed = True
            raise
        finally:
            if self.pool is not None:
                for process in list((getattr(self.pool, "_processes", None) or {}).values()) if failed else []:
                    process.terminate()
                self.pool.shutdown(wait=True, cancel_futures=failed)
                self.pool = None
                self.progress.close()
                _write(self.folder / "seconds.json", json.dumps(dict(sorted(self.seconds.items())), indent=1).encode())
        return set(self.pending)


class Progress:
    """What a :class:`Run` is doing, told within seconds of its start and then at least every
    ``every`` seconds: the jobs done of all, those running and for how long, the parts of the
    shared runs done (``sdpa.runtime.each``, told by the workers), the time so far and, where
    the last build's record times every job, an estimate of the time left. On a terminal a
    bar (tqdm) that ``say``'s lines (MkDocs' log) pass above; elsewhere (CI) plain lines."""

    def __init__(self, names: list[str], earlier: dict[str, float], workers: int, messages, say, every: float):
        from tqdm import tqdm
        from tqdm.contrib.logging import logging_redirect_tqdm

        self.names, self.earlier, self.workers, self.messages = names, earlier, workers, messages
        self.start, self.finished, self.running, self.parts = time.monotonic(), set(), {}, {}
        self.lock, self.stopped = threading.Lock(), threading.Event()
        self.bar = tqdm(total=len(names), unit="job", desc="Executing", dynamic_ncols=True) if _terminal() else None
        self.say = self.bar.write if self.bar is not None and say is print else say
        self.quiet = contextlib.ExitStack()
        if self.bar is not None:
            self.quiet.enter_context(logging_redirect_tqdm([logging.getLogger("mkdocs")]))
        self.thread = threading.Thread(target=self._tick, args=(every,), daemon=True, name="progress")
        self.thread.start()

    def done(self, name: str, line: str) -> None:
        with self.lock:
            self.finished.add(name)
            self.running.pop(name, None)
            if self.bar is not None:
                self.bar.update(1)
            if line:
                self.say(f"  {line} ({len(self.finished)} of {len(self.names)} jobs done, "
                         f"{_minutes(time.monotonic() - self.start)} so far)")

    def line(self) -> str:
        """``12 of 80 jobs done; running: snippets/x.py 45 s; parts: 5 of 24; 3 min 10 s so far, about 9 min left``."""
        now, left = time.monotonic(), [name for name in self.names if name not in self.finished]
        running = ", ".join(f"{name} {now - since:.0f} s" for name, since in sorted(self.running.items()))
        parts = ", ".join(f"{name.rsplit('.', 1)[-1]} {done} of {total}" for name, (done, total) in self.parts.items())
        text = f"{len(self.finished)} of {len(self.names)} jobs done" + (f"; running: {running}" if running else "")
        text += (f"; parts: {parts}" if parts else "") + f"; {_minutes(now - self.start)} so far"
        if left and all(name in self.earlier for name in left):  # by the last build's seconds
            work = sum(self.earlier[name] for name in left) - sum(now - t for t in self.running.values())
            text += f", about {_minutes(max(work, 0) / self.workers)} left by the last build's record"
        return text

    def _tick(self, every: float) -> None:
        told = time.monotonic() - every + min(every, 5.0)  # the first line five seconds in, at most
        while not self.stopped.wait(1.0):
            with self.lock:
                while not self.messages.empty():
                    kind, name, *rest = self.messages.get()
                    if kind == "part":
                        self.parts[name] = tuple(rest[:2])
                    elif name not in self.finished:  # a job started (its end may have come first)
                        self.running[name] = rest[-1]
                if self.bar is not None:
                    self.bar.set_postfix_str(self.line().split("; ", 1)[-1], refresh=True)
                elif time.monotonic() - told >= every:
                    told = time.monotonic()
                    self.say(f"  {self.line()}")

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        if self.bar is not None:
            self.bar.close()
        self.quiet.close()


def _terminal() -> bool:
    return sys.stderr.isatty() and not env.ci()


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s" if seconds >= 60 else f"{seconds:.0f} s"


def run_plan(plan: Plan, jobs: int | None = None, say: Callable[[str], None] = print) -> set[Path]:
    """:class:`Run` to its end; the records written. Raises what a worker raised."""
    return Run(plan, jobs, say).close()


def main(argv: list[str] | None = None) -> int | str:
    parser = argparse.ArgumentParser(prog="python -m sitebuild.execute", description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", help="pages under docs/ (default: every page)")
    parser.add_argument("--snippet", action="append", default=[], metavar="X/Y.PY",
                        help="only this snippet (under snippets/, as a page includes it; repeatable)")
    parser.add_argument("--store", type=Path, help=f"the store's folder (default: {env.STORE}, else .cache/store)")
    parser.add_argument("--jobs", type=int, help=f"worker processes (default: {env.JOBS}, else the CPU cores)")
    parser.add_argument("-f", "--config-file", default=str(REPO / "mkdocs.yml"), help="the site's mkdocs.yml")
    args = parser.parse_args(argv)
    from mkdocs.config import load_config

    env.export(**({env.STORE: str(args.store.resolve())} if args.store else {}))
    try:
        chosen = plan(load_config(args.config_file), args.pages or None)
        if args.snippet:  # those snippets alone (a test that reads only them), no notebook
            files = {f"snippets/{snippet}" for snippet in args.snippet}
            kept = {page: [s for s in found if s.file in files] for page, found in chosen.jobs.items()}
            chosen = replace(chosen, jobs={page: found for page, found in kept.items() if found}, notebooks={})
        run_plan(chosen, args.jobs, lambda x: print(x, flush=True))
    except CodeChanged as error:
        return str(error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
