"""MkDocs hooks (``hooks:`` in mkdocs.yml): execute what the store lacks, render from the store.

``on_pre_build`` starts what the store lacks in worker processes (:mod:`sitebuild.execute`);
the build itself only reads the store: a python fence shows what its snippet printed (or
its traceback, and the build fails naming file, line and page), the notebook page the HTML
its run left, each waiting for its record while the workers run. A build's state is made
new by ``on_config`` (``mkdocs serve``'s rebuilds too); only the command lasts.
"""

from __future__ import annotations

import html
import json
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # MkDocs loads this file by path; the package sits beside it
    sys.path.insert(0, str(REPO))

from mkdocs.exceptions import PluginError  # noqa: E402

from sitebuild import code_pages, execute, markup, notebook, report  # noqa: E402
from sitebuild.execute import Snippet, SnippetFailure  # noqa: E402
from sitebuild.fences import FenceCheckExtension  # noqa: E402
from sitebuild.markdown_exec_adapter import render, route_python_fences  # noqa: E402
from sitebuild.math import MathMLExtension  # noqa: E402

log = logging.getLogger("mkdocs.sitebuild")
_SERVE_ERRORS = logging.getLogger("sitebuild.serve")


class Build:
    """One build's state: its plan (the keys) and run, the page being rendered, its report."""

    def __init__(self, config):
        self.config, self.bases = config, execute.snippet_bases(config)
        self.plan, self.run = None, None  # the keys; what the store lacked, running in workers
        self.library: code_pages.Library | None = None  # None: no Code pages
        self.page, self.failures, self.snippets, self.notebooks = "", [], [], []  # the last two: the report
        self.profiles: dict[str, str] = {}  # page -> the profile its snippets ran with


_command = "build"
_build: Build | None = None


def on_startup(command: str, dirty: bool) -> None:
    global _command
    _command = command


def on_config(config):
    global _build
    _build = Build(config)
    config.markdown_extensions += [FenceCheckExtension(base_path=[str(b) for b in _build.bases]), MathMLExtension()]
    route_python_fences(config.mdx_configs, lambda source, language, css_class, options, md, **kwargs:
                        render(source, options, md, _output))  # superfences' formatter: the output, in tabs
    if config.plugins.get("mkdocs-jupyter") is not None:
        notebook.read_pages(_notebook_page)
    return config


def on_pre_build(config) -> None:
    _build.plan = execute.plan(config)
    _build.run = execute.Run(_build.plan, say=log.info)


def on_files(files, config):
    for file in files.documentation_pages():  # ``mkdocs serve --dirty`` renders a page whose runs changed
        if file.src_uri in _build.run.pages:
            file.is_modified = lambda: True
    if files.get_file_from_path(code_pages.SECTION) is not None:  # the Code pages (docs/code/) are built
        _build.library = code_pages.Library(_build.bases)
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if _build.library is None:
        return markdown
    return code_pages.link_uses(markdown, page.file.src_uri, _build.library, _build.bases)


def on_pre_page(page, config, files):
    _build.page = page.file.src_uri


def _record(path: Path, what: str) -> dict:
    try:
        _build.run.wait(path)
    except Exception as error:  # a run that cannot be stored, a worker that died
        raise PluginError(f"{what}: its run failed: {error!r}") from error
    if not path.is_file():
        raise PluginError(f"{what}: the store ({_build.plan.folder}) holds no run of it: was it edited during the "
                          "build? Build again")
    return json.loads(path.read_text())


def _output(code: str, filename: str) -> str:
    page = _build.page
    path = _build.plan.record(Snippet(page, filename, code))
    record = _record(path, f"{filename} (page docs/{page})")
    _build.snippets.append(report.entry(page, record, path in _build.run.pending, filename))
    _build.profiles[page] = record["profile"]
    if record["failure"] is not None:
        failure = SnippetFailure(**record["failure"])
        _build.failures.append(failure)
        return f"<pre><code>{html.escape(failure.traceback)}</code></pre>\n"
    return record["output"]


def _notebook_page(path: str, kwargs: dict) -> str:
    """The notebook page's HTML, as a worker executed and converted it."""
    page = Path(path).relative_to(Path(_build.config.docs_dir).resolve()).as_posix()
    record_path = _build.plan.notebook(path, kwargs)
    record = _record(record_path, f"docs/{page}")
    _build.notebooks.append(report.entry(page, record, record_path in _build.run.pending))
    return record["html"]


def on_page_content(html: str, page, config, files) -> str:
    # A page's snippets that failed fail the build (at every verbosity: ``-q`` included, which
    # drops warnings before strict mode counts them, mkdocs issue 4126); serve shows them,
    # through a logger outside the "mkdocs" one that strict mode counts, and goes on.
    messages = [failure.message(_build.page) for failure in _build.failures]
    _build.failures.clear()
    if messages and _command != "serve":
        raise PluginError("\n\n".join(messages))
    if messages and not _SERVE_ERRORS.handlers:
        _SERVE_ERRORS.propagate = False
        _SERVE_ERRORS.addHandler(logging.StreamHandler(sys.stderr))
        _SERVE_ERRORS.handlers[0].setFormatter(logging.Formatter("ERROR   -  %(message)s"))
    for message in messages:
        _SERVE_ERRORS.error(message)
    if page.file.src_uri in _build.profiles:  # say which size of experiments made the page
        html = report.with_profile(html, _build.profiles[page.file.src_uri], page, config, files)
    # MkDocs collects a page's ids before Markdown postprocessors add theirs (the numbered
    # equations of sitebuild/math.py): give it every id of the finished page, so that links
    # to them are checked, not reported as broken.
    if page.present_anchor_ids is not None:
        page.present_anchor_ids.update(markup.ids(html))
    return html


def on_post_page(output: str, page, config) -> str:
    return notebook.number_cells(output)


def on_post_build(config) -> None:
    _build.run.close()
    notebook.write_downloads(config, _build.bases)
    report.write(config.site_dir, _build.snippets, _build.notebooks, report.digests(config, _build.plan))


def on_build_error(error) -> None:
    if _build is not None and _build.run is not None:
        _build.run.close(failed=True)
