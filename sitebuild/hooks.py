"""MkDocs hooks (``hooks:`` in mkdocs.yml): the site's build steps, wired to MkDocs' events.

Each job lives in its own module of :mod:`sitebuild`; this file only connects them. The
state of a build (its snippet runner, failures, report) is made new by ``on_config`` for
every build, ``mkdocs serve`` rebuilds included, so nothing leaks from one build into the
next. Only the command (``build`` or ``serve``) is kept for the life of the process.
"""

from __future__ import annotations

import sys
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # MkDocs loads this file by path; the package sits beside it
    sys.path.insert(0, str(REPO))

from sitebuild import code_pages, keep, markup, notebook, report, serve  # noqa: E402
from sitebuild.fences import FenceCheckExtension  # noqa: E402
from sitebuild.math import MathMLExtension  # noqa: E402
from sitebuild.runner import SnippetRunner  # noqa: E402

_command = "build"
_runner: SnippetRunner | None = None  # this build's, replaced by on_config
_library: code_pages.Library | None = None  # this build's, read from disk by on_files (None: no Code pages)


def on_startup(command: str, dirty: bool) -> None:
    global _command
    _command = command
    if command == "serve":  # rebuilds reuse what the last one computed from the same input
        serve.remember_across_rebuilds()


def on_config(config):
    global _runner
    _runner = SnippetRunner(config, _command, keep.page_job())  # under SDPA_KEEP_RUNS, kept for the tests
    config.markdown_extensions += [FenceCheckExtension(base_path=[str(b) for b in _runner.bases]),
                                   MathMLExtension()]
    notebook.use_ipc_kernel()
    if config.plugins.get("mkdocs-jupyter") is not None:
        notebook.time_conversions()
    if _runner.cached:
        notebook.use_snippet_cache(config, _runner.bases)
    return config


def on_serve(server, config, builder):
    return serve.poll_often(server)


def on_pre_build(config) -> None:
    if _command == "serve":  # a rebuild: edited library modules must be imported again
        _runner.forget_snippet_modules()


def on_files(files, config):
    global _library
    _library = code_pages.Library(_runner.bases)
    if not code_pages.add_pages(files, config, _library):
        _library = None
    _runner.start(files, config)  # every page's snippets (and the notebook), in workers
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if _library is None:
        return markdown
    return code_pages.link_uses(markdown, page.file.src_uri, _library, _runner.bases)


def on_pre_page(page, config, files):
    _runner.page = page.file.src_uri
    return page


def on_page_content(html: str, page, config, files) -> str:
    _runner.report_failures()
    if page.file.src_uri in _runner.profiles:  # say which size of experiments made the page
        html = _with_profile(html, _runner.profiles[page.file.src_uri], page, config, files)
    # MkDocs collects a page's ids before Markdown postprocessors add theirs (the numbered
    # equations of sitebuild/math.py): give it every id of the finished page, so that links
    # to them are checked, not reported as broken.
    if page.present_anchor_ids is not None:
        page.present_anchor_ids.update(markup.ids(html))
    return html


#: ``extra: full_build_decides:`` in mkdocs.yml names the page (and anchor) that says what
#: the full build decides; a quick-built page links there from its top.
DECIDES = "full_build_decides"
REPORT = "build-report.md"


def _with_profile(html: str, profile: str, page, config, files) -> str:
    """The page's HTML with its profile named (:func:`sitebuild.report.profile_note`): a
    quick-built page's line goes under its title. A site without the pages it links (a
    one-page preview) gets the line without the link."""
    def url(target: str) -> str | None:
        path, _, anchor = target.partition("#")
        found = files.get_file_from_path(path)
        return None if found is None else found.url_relative_to(page.file) + (f"#{anchor}" if anchor else "")

    top, end = report.profile_note(profile, url(REPORT), url(config.extra.get(DECIDES, REPORT)))
    title = html.find("</h1>")
    at = 0 if title < 0 else title + len("</h1>")
    return f"{html[:at]}\n{top}{html[at:].lstrip(chr(10))}{end}" if top else html + end


def on_post_page(output: str, page, config) -> str:
    return notebook.number_cells(output)


def on_post_build(config) -> None:
    notebook.write_downloads(config, _runner.bases)
    _runner.finish(config)


def on_build_error(error) -> None:
    if _runner is not None:
        _runner.close(failed=True)
