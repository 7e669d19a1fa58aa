"""Runs the executed fences of one build: every snippet goes through :func:`execute`.

A :class:`SnippetRunner` is made new for every build (``mkdocs serve`` rebuilds too), so
nothing one build records reaches the next. For each python fence it

* serves an unchanged snippet from the content-addressed cache when the cache is on
  (:mod:`sitebuild.cache`: ``mkdocs serve``, or ``SDPA_CACHE=1``);
* otherwise runs the code with :func:`execute`, compiled under the file's name, so a
  traceback reads ``snippets/<page>/<name>.py, line N`` with no rewriting;
* times it and adds it to the build report (:mod:`sitebuild.report`);
* keeps a failure (:mod:`sitebuild.errors`) for the page's end, where ``mkdocs build``
  fails and ``mkdocs serve`` reports it and shows the traceback in the page.

:func:`execute` is the only place a snippet runs: a pool of worker processes could call
it ahead of the pages and hand the outputs to :meth:`SnippetRunner.format_fence`.
"""

from __future__ import annotations

import html
import io
import linecache
import sys
import time
import types
from pathlib import Path

from sitebuild import cache, errors, markdown_exec_adapter
from sitebuild.errors import SnippetFailure
from sitebuild.report import BuildReport


class SnippetError(Exception):
    def __init__(self, failure: SnippetFailure):
        super().__init__(failure.error)
        self.failure = failure


def execute(code: str, filename: str) -> str:
    """Run one snippet in a fresh module named after ``filename``; return what it printed.

    Only ``print`` is captured, as markdown-exec does. Raises :class:`SnippetError`.
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
        raise SnippetError(SnippetFailure.from_exception(error, filename)) from error
    finally:
        del sys.modules[name]
        linecache.cache.pop(filename, None)
    return "".join(chunks)


def snippet_bases(config) -> list[Path]:
    """The folders pymdownx.snippets reads includes from (``snippets/``)."""
    bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", ["snippets"])
    return [Path(base).resolve() for base in ([bases] if isinstance(bases, str) else bases)]


class SnippetRunner:
    """The executed fences of one build."""

    def __init__(self, config, command: str):
        self.command = command
        self.bases = snippet_bases(config)
        self.cached = cache.enabled(command)
        self.key_memo: dict = {}  # this build's module lookups for the cache keys
        self.page = ""
        self.failures: list[SnippetFailure] = []
        self.report = BuildReport()
        for base in reversed(self.bases):  # snippets import the library as `sdpa`
            if str(base) not in sys.path:
                sys.path.insert(0, str(base))
        markdown_exec_adapter.route_python_fences(config.mdx_configs, self.format_fence)

    def forget_snippet_modules(self) -> None:
        """Under ``mkdocs serve``, drop imported library modules so edits are imported again."""
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None) or ""
            if path and any(Path(path).resolve().is_relative_to(base) for base in self.bases):
                del sys.modules[name]

    def format_fence(self, source: str, language: str, css_class: str, options: dict, md, **kwargs) -> str:
        """superfences' formatter for python fences: cached, or run, timed and recorded."""
        snippet = markdown_exec_adapter.title(options) or f"a code block in docs/{self.page}"
        key = None
        if self.cached:
            from sdpa.runtime import device  # imports torch: only when a snippet runs

            key = cache.snippet_key(source, options, self.bases, str(device()), self.key_memo)
            entry = cache.load(key)
            if entry is not None:
                self.report.add(self.page, snippet, entry["html"], entry["seconds"], cached=True)
                return entry["html"]
        failures, start = len(self.failures), time.perf_counter()
        output = markdown_exec_adapter.render(source, options, md, self._run)
        seconds = round(time.perf_counter() - start, 3)
        self.report.add(self.page, snippet, output, seconds, cached=False)
        if key is not None and len(self.failures) == failures:
            cache.store(key, {"snippet": snippet, "html": str(output), "seconds": seconds})
        return output

    def _run(self, code: str, filename: str) -> str:
        try:
            return execute(code, filename or f"<a code block in docs/{self.page}>")
        except SnippetError as error:
            self.failures.append(error.failure)
            return f"<pre><code>{html.escape(error.failure.traceback)}</code></pre>\n"

    def report_failures(self) -> None:
        """At the end of a page: fail the build on its snippets' errors (serve: print them)."""
        messages = [failure.message(self.page) for failure in self.failures]
        self.failures.clear()
        errors.report(messages, self.command)
