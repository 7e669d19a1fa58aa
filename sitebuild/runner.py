"""Runs the executed fences of one build: every snippet goes through :func:`execute`.

A :class:`SnippetRunner` is made new for every build (``mkdocs serve`` rebuilds too), so
nothing one build records reaches the next. For each python fence it takes what the
snippet printed from, in this order,

* the content-addressed cache when the cache is on (:mod:`sitebuild.cache`:
  ``mkdocs serve``, or ``SDPA_CACHE=1``);
* the job that ran the fence's page ahead in a worker process (:mod:`sitebuild.pool`;
  :meth:`SnippetRunner.start` submits every page at the start of the build);
* :func:`run` here, in the MkDocs process (``SDPA_JOBS=1``, or a fence that no job ran).

:func:`execute` is the only place a snippet runs, in a worker or here: the code is
compiled under the file's name, so a traceback reads ``snippets/<page>/<name>.py, line N``
with no rewriting. The runner times each fence for the build report
(:mod:`sitebuild.report`) and keeps a failure (:mod:`sitebuild.errors`) for the page's
end, where ``mkdocs build`` fails and ``mkdocs serve`` reports it and shows the traceback
in the page.
"""

from __future__ import annotations

import html
import linecache
import os
import re
import sys
import time
import types
from concurrent.futures import Future
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Callable

from sdpa import env
from sitebuild import cache, errors, markdown_exec_adapter, notebook, pool
from sitebuild.errors import SnippetFailure
from sitebuild.fences import executed_fences
from sitebuild.report import BuildReport


class SnippetError(Exception):
    """A snippet raised. Its message starts with the snippet's file and line, so the last
    line of a traceback (under pytest, the line that names the failure) says where:
    ``SnippetError: snippets/<page>/<name>.py, line 4: ZeroDivisionError: division by zero``;
    the snippet's own traceback is chained above it."""

    def __init__(self, failure: SnippetFailure):
        super().__init__(f"{failure.where}: {failure.error}")
        self.failure = failure


def execute(code: str, filename: str, namespace: dict | None = None) -> str:
    """Run one snippet in a fresh module named after ``filename``; return what it printed.

    Only ``print`` is captured, as markdown-exec does. Raises :class:`SnippetError`.
    ``namespace``, when given, receives the module's globals (the tests read its data).
    """
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
        failure = SnippetFailure.from_exception(error, filename)
        raise SnippetError(failure).with_traceback(SnippetFailure.frames(error, filename)) from error
    finally:
        del sys.modules[name]
        linecache.cache.pop(filename, None)
        if namespace is not None:
            namespace.update(module.__dict__)
    return "".join(chunks)


@dataclass(frozen=True)
class Outcome:
    """What one snippet printed, or how it failed, and its seconds."""

    output: str
    failure: SnippetFailure | None
    seconds: float
    runtime: tuple[str, str, str]  # the device, the torch version and the profile it ran with


def runtime() -> tuple[str, str, str]:
    """The device snippets run on here, the torch version and the profile (``quick`` or
    ``full``), as the cache keys name them."""
    device = cache.device()
    return device, version("torch"), env.profile_for(device)


def run(code: str, filename: str, namespace: dict | None = None) -> Outcome:
    """:func:`execute`, timed, its failure kept (``namespace``: as for :func:`execute`)."""
    start = time.perf_counter()
    try:
        output, failure = execute(code, filename, namespace), None
    except SnippetError as error:
        output, failure = "", error.failure
    return Outcome(output, failure, round(time.perf_counter() - start, 3), runtime())


def run_page(fences: list[tuple[str, str]]) -> list[Outcome]:
    """A worker's job: the ``(filename, code)`` fences of one page, in order."""
    return [run(code, filename) for filename, code in fences]


def snippet_bases(config) -> list[Path]:
    """The folders pymdownx.snippets reads includes from (``snippets/``)."""
    bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", ["snippets"])
    return [Path(base).resolve() for base in ([bases] if isinstance(bases, str) else bases)]


def whole_file_fences(markdown: str, bases: list[Path]) -> list[tuple[str, str]]:
    """``(filename, code)`` of each executed fence of a page that runs one whole file, in
    order: what a worker runs for the page (:func:`run_page`)."""
    found = []
    for fence in executed_fences(markdown):
        if len(fence.includes) != 1 or len(fence.titles) != 1:
            continue  # not one named file: it runs here, when its page renders
        include = fence.includes[0][1]
        path = next((base / include for base in bases if (base / include).is_file()), None)
        if path is not None:  # else the page fails on its missing include
            found.append((fence.titles[0], path.read_text(encoding="utf-8")))
    return found


RUNS_WITH = re.compile(r"\A---\n(?:.*\n)*?runs_with:\s*(\S+)\s*\n(?:.*\n)*?---\n")


def runs_with(markdown: str) -> str | None:
    """The page named by a page's front matter ``runs_with: other.md``: the build's worker
    for that page runs this page's snippets too, after its own, so that both share the
    experiments the library memoises (a page split off another that reads the same runs)."""
    found = RUNS_WITH.match(markdown)
    return found.group(1) if found else None


def page_jobs(pages: dict[str, list], markdown: dict[str, str]) -> tuple[dict[str, list], dict[str, str]]:
    """The workers' jobs for ``pages`` (page -> its fences; ``markdown``: page -> its text):
    each page's fences, those of a page whose front matter names another of ``pages``
    (:func:`runs_with`) after its host's. Returns (host page -> fences, hosted page -> host)."""
    hosted = {page: host for page in pages
              if (host := runs_with(markdown[page])) in pages and pages[page] and pages[host]}
    jobs = {page: list(fences) for page, fences in pages.items() if page not in hosted}
    for page, host in hosted.items():
        jobs[host] += pages[page]
    return jobs, hosted


class PageJob:
    """One page's fences, run ahead in a worker; each fence takes its outcome once."""

    def __init__(self, fences: list[tuple[str, str]], future: Future):
        self.fences = fences
        self.future = future
        self.taken = [False] * len(fences)

    def take(self, filename: str, code: str) -> Outcome | None:
        """The outcome of the first fence not yet taken that ran this code (None: none did)."""
        for index, fence in enumerate(self.fences):
            if not self.taken[index] and fence == (filename, code):
                self.taken[index] = True
                try:
                    return self.future.result()[index]
                except Exception:  # noqa: BLE001 - a worker that died: the fence runs here
                    return None
        return None


class SnippetRunner:
    """The executed fences of one build."""

    def __init__(self, config, command: str, page_job: Callable = run_page):
        """``page_job``: what a worker runs for each page (:func:`run_page`, or a function
        that also keeps the runs for the tests: :func:`sitebuild.keep.page_job`)."""
        self.command = command
        self.page_job = page_job
        self.bases = snippet_bases(config)
        self.config = config
        self.cached = cache.enabled(command)
        self._keyed: tuple[str, str, str] | None = None  # this build's (library, rendering, device) for the keys
        self.page = ""
        self.failures: list[SnippetFailure] = []
        self.report = BuildReport()
        self.profiles: dict[str, str] = {}  # page -> the profile its snippets ran with
        self.pool: pool.Pool | None = None
        self.jobs: dict[str, PageJob] = {}
        self._last: Outcome | None = None  # the last fence's run
        self._where = "here"  # and where it ran
        for base in reversed(self.bases):  # snippets import the library as `sdpa`
            if str(base) not in sys.path:
                sys.path.insert(0, str(base))
        markdown_exec_adapter.route_python_fences(config.mdx_configs, self.format_fence)

    def forget_snippet_modules(self) -> None:
        """Under ``mkdocs serve``, drop imported library modules so edits are imported again."""
        # The folders are on sys.path as they are written here (resolved), so a module
        # imported from one has a file name that starts with it: no path to resolve (4,000
        # modules, a quarter of a second).
        bases = tuple(os.path.join(str(base), "") for base in self.bases)
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(bases):
                del sys.modules[name]

    # ---- ahead of the pages ---------------------------------------------------------

    def start(self, files, config) -> None:
        """Submit every page's fences (and every notebook) to a pool of workers, slowest first.

        With ``SDPA_JOBS=1``, or fewer than two jobs, nothing is submitted: each fence
        runs here when its page renders."""
        notebooks = notebook.plan(config)
        pages: dict[str, list[tuple[str, str]]] = {}
        for file in files.documentation_pages():
            if file.src_uri in notebooks:
                pages[file.src_uri] = []
            elif file.src_uri.endswith(".md") and (fences := self._fences(file.content_string)):
                pages[file.src_uri] = fences
        size = pool.workers()
        if size == 1 or len(pages) < 2:
            return
        markdown = {file.src_uri: file.content_string for file in files.documentation_pages()
                    if file.src_uri in pages}
        pages, hosted = page_jobs(pages, markdown)  # a notebook has no fences: never a host or hosted
        self.pool = pool.Pool(size, pool.preload(code for fences in pages.values() for _, code in fences))
        for page in pool.start_order({page: len(fences) for page, fences in pages.items()}, config.docs_dir):
            if page in notebooks:
                notebook.run_ahead(notebooks[page], self.pool.submit(notebook.to_html, *notebooks[page]))
            else:
                self.jobs[page] = PageJob(pages[page], self.pool.submit(self.page_job, pages[page]))
        for page, host in hosted.items():
            self.jobs[page] = self.jobs[host]

    def _fences(self, markdown: str) -> list[tuple[str, str]]:
        """``(filename, code)`` of each fence of a page that runs one whole file, not cached."""
        found = []
        for filename, code in whole_file_fences(markdown, self.bases):
            key = self._cache_key(code, {"printed": filename})
            if key is None or cache.load(key) is None:
                found.append((filename, code))
        return found

    def _cache_key(self, code: str, options: dict) -> str | None:
        """With the cache on, the key of a fence's HTML (its options) or of what it printed
        (``{"printed": filename}``); the workers' plan can only know the second."""
        if not self.cached:
            return None
        if self._keyed is None:  # once per build, at its first key: the config is complete by then
            self._keyed = cache.library_digest(self.bases), cache.rendering(self.config), cache.device()
        library, rendered, device = self._keyed
        return cache.snippet_key(code, options, library, device, rendered)

    # ---- each fence, as its page renders ----------------------------------------------

    def format_fence(self, source: str, language: str, css_class: str, options: dict, md, **kwargs) -> str:
        """superfences' formatter for python fences: what the snippet printed, in tabs."""
        snippet = markdown_exec_adapter.title(options) or f"a code block in docs/{self.page}"
        key = self._cache_key(source, options)
        entry = cache.load(key) if key else None
        if entry is not None:  # the fence's HTML as the last build made it
            self.report.add(self.page, snippet, entry["html"], entry["seconds"], entry["runtime"], cached=True)
            self.profiles[self.page] = entry["runtime"][2]
            return entry["html"]
        failures = len(self.failures)
        output = markdown_exec_adapter.render(source, options, md, self._run)
        last, where = self._last, self._where
        self.report.add(self.page, snippet, output, last.seconds, last.runtime, cached=where == "cache",
                        worker=where == "worker")
        self.profiles[self.page] = last.runtime[2]
        if key and len(self.failures) == failures:
            cache.store(key, {"snippet": snippet, "html": str(output), "seconds": last.seconds,
                              "runtime": last.runtime})
        return output

    def _run(self, code: str, filename: str) -> str:
        filename = filename or f"<a code block in docs/{self.page}>"
        key = self._cache_key(code, {"printed": filename})
        entry = cache.load(key) if key else None
        if entry is not None:
            outcome, where = Outcome(entry["output"], None, entry["seconds"], tuple(entry["runtime"])), "cache"
        else:
            job = self.jobs.get(self.page)
            outcome, where = (job.take(filename, code) if job else None), "worker"
            if outcome is None:
                outcome, where = run(code, filename), "here"
            if key and outcome.failure is None:
                cache.store(key, {"snippet": filename, "output": outcome.output, "seconds": outcome.seconds,
                                  "runtime": outcome.runtime})
        self._last, self._where = outcome, where
        if outcome.failure is not None:
            self.failures.append(outcome.failure)
            return f"<pre><code>{html.escape(outcome.failure.traceback)}</code></pre>\n"
        return outcome.output

    def report_failures(self) -> None:
        """At the end of a page: fail the build on its snippets' errors (serve: print them)."""
        messages = [failure.message(self.page) for failure in self.failures]
        self.failures.clear()
        errors.report(messages, self.command)

    # ---- the end of the build ---------------------------------------------------------

    def finish(self, config) -> None:
        """Stop the workers; write the build report; keep each page's seconds for the next order."""
        self.close()
        for page, seconds, where in notebook.finished(config):
            self.report.add_notebook(page, seconds, worker=where == "worker")
        self.report.write(config.site_dir)
        pool.remember_seconds(self.report.seconds_per_page(), config.docs_dir)

    def close(self, *, failed: bool = False) -> None:
        if self.pool is not None:
            self.pool.close(failed=failed)
            self.pool = None
