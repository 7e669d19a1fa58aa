"""MkDocs hooks (``hooks:`` in mkdocs.yml): execute what the store lacks, render from the store.

``on_pre_build`` starts what the store lacks in worker processes (:mod:`sitebuild.execute`);
the build itself only reads the store: a python fence shows what its snippet printed (or
its traceback, and the build fails naming file, line and page), and under it the loop that
trained it and the library code it uses; the notebook page shows the HTML its run left. A
build's state is made new by ``on_config``; under ``mkdocs serve`` a rebuild after an edit
of ``sitebuild/`` runs the new code (:func:`on_serve`). ``--dirty`` renders again every
page whose inputs changed (:func:`on_files`), so it never serves a stale page.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import sys
import types
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # MkDocs loads this file by path; the package sits beside it
    sys.path.insert(0, str(REPO))

from mkdocs.exceptions import PluginError  # noqa: E402

from sitebuild import code_pages, execute, markup, notebook, report  # noqa: E402
from sitebuild.execute import BUILD, Snippet, SnippetFailure, env  # noqa: E402
from sitebuild.fences import FenceCheckExtension  # noqa: E402
from sitebuild.markdown_exec_adapter import render, route_python_fences  # noqa: E402
from sitebuild.math import MathMLExtension  # noqa: E402

log = logging.getLogger("mkdocs.sitebuild")
#: What a page's rendering reads besides its own file and its runs: their versions make every
#: page's mark (:func:`on_files`).
RENDERING = ("mkdocs", "mkdocs-material", "markdown-exec", "pymdown-extensions", "Markdown", "Pygments", "math-core")


class Build:
    """One build's state: its plan (the keys) and run, the page being rendered, its report."""

    def __init__(self, config):
        self.config, self.bases = config, execute.snippet_bases(config)
        self.plan, self.run = None, None  # the keys; what the store lacked, running in workers
        self.library: code_pages.Library | None = None  # None: no Code pages
        self.page, self.failures, self.snippets, self.notebooks = "", [], [], []  # the last two: the report
        self.profiles: dict[str, str] = {}  # page -> the profile its snippets ran with
        self.marks: dict[str, str] = {}  # page -> the digest of all its rendering reads
        self.rendered: set[str] = set()
        self.records: dict[Path, dict | None] = {}


_command, _dirty = "build", False
_build: Build | None = None


def on_startup(command: str, dirty: bool) -> None:
    global _command, _dirty
    _command, _dirty = command, dirty


def on_serve(server, config, builder):
    """Before each rebuild, if a file of ``sitebuild/`` changed: forget its modules and run the
    site's hook files again (MkDocs keeps them loaded), so the rebuild runs the code on disk."""
    hooks, loaded = list(config.hooks.values()), [env.code_digest(BUILD)]
    state = {"_command": _command, "_dirty": _dirty}

    def rebuild() -> None:
        if env.code_digest(BUILD) != loaded[0]:
            loaded[0] = env.code_digest(BUILD)
            for name in [name for name in sys.modules if name.split(".")[0] == "sitebuild"]:
                del sys.modules[name]
            for module in hooks:
                module.__spec__.loader.exec_module(module)
                vars(module).update(state if module.__spec__.origin == __file__ else {})
        builder()

    server.builder = rebuild
    return server


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


def _marks_file(config) -> Path:
    """Where the marks of the pages last built into the site's folder are kept (in the store)."""
    site = hashlib.sha256(str(Path(config.site_dir).resolve()).encode()).hexdigest()[:16]
    return _build.plan.folder / "sites" / f"{site}.json"


def _shared(config) -> str:
    """The digest of what every page's rendering reads: mkdocs.yml, the build's code and theme,
    the includes, the records, the library, the run's context, the list of pages, the versions."""
    docs, plan = Path(config.docs_dir).resolve(), _build.plan
    roots = [Path(config.config_file_path), BUILD, report.RECORDS_DIR,
             *(base for base in _build.bases if base != docs and not (base / env.LIBRARY.name).is_dir())]
    digest = hashlib.sha256(repr((plan.code, env.run_context(plan.device), config.site_url, config.use_directory_urls,
                                  [version(package) for package in RENDERING])).encode())
    report.hash_files(digest, roots)
    digest.update("\0".join(sorted(str(path.relative_to(docs)) for path in docs.rglob("*"))).encode())
    return digest.hexdigest()


def on_files(files, config):
    if files.get_file_from_path(code_pages.SECTION) is not None:  # the Code pages (docs/code/) are built
        _build.library = code_pages.library(_build.plan.code, tuple(_build.bases))
    # A page is rendered again (``--dirty``: MkDocs asks ``is_modified``) when its mark, the
    # digest of all it reads (its file, its runs' keys, what every page reads), is not the one
    # the last build of this folder left, or a snippet of it ran now (a failure runs again).
    saved, shared, changed = execute.read_json(_marks_file(config)), _shared(config), []
    _marks_file(config).unlink(missing_ok=True)  # kept again once this build has ended well
    for file in files.documentation_pages():
        runs = [_build.plan.record(snippet).name for snippet in _build.plan.jobs.get(file.src_uri, [])]
        if file.src_uri in _build.plan.notebooks:
            runs.append(_build.plan.notebook(*_build.plan.notebooks[file.src_uri]).name)
        mark = hashlib.sha256(b"\0".join([shared.encode(), file.content_bytes, *map(str.encode, runs)])).hexdigest()
        _build.marks[file.src_uri] = mark
        if (saved.get(file.src_uri) != mark or file.src_uri in _build.run.pages
                or not Path(file.abs_dest_path).is_file()):
            changed.append(file)
    _search_index(config, changed, files)
    for file in files.documentation_pages():
        file.is_modified = lambda file=file: file in changed
    return files


def _search_index(config, changed: list, files) -> None:
    """Keep Material's search index whole in a dirty build: it merges the entries of one page
    rendered again (not the home page's: all start with its location) into the last index (this
    process's, else the site's file); more pages than one are all rendered again."""
    search = config.plugins.get("material/search")
    last = Path(config.site_dir, "search", "search_index.json")
    if search is None or not _dirty:
        return
    if len(changed) > 1 or any(file.url in ("", "index.html") for file in changed):
        changed[:] = files.documentation_pages()
        search.search_index_prev = None
    elif search.search_index_prev is None and last.is_file():
        search.search_index_prev = types.SimpleNamespace(entries=json.loads(last.read_text())["docs"])


def _record(path: Path, what: str) -> dict:
    """The record ``path`` (read once a build), once this build's workers have written it."""
    if path not in _build.records:
        try:
            _build.run.wait(path)
        except Exception as error:  # a run that cannot be stored, a worker that died
            raise PluginError(f"{what}: its run failed: {error!r}") from error
        _build.records[path] = execute.read(path)
    if _build.records[path] is None:
        raise PluginError(f"{what}: the store ({_build.plan.folder}) holds no run of it: was it edited during the "
                          "build? Build again")
    return _build.records[path]


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Under each executed fence, the loop that trained its snippet and the library code it
    uses (``code_pages.under_snippet``)."""
    lines, name = markdown.split("\n"), page.file.src_uri
    for fence, snippet in reversed(execute.fenced_snippets(markdown, name, _build.bases)):
        trained = _record(_build.plan.record(snippet), f"{snippet.file} (page docs/{name})")["trained"]
        added = code_pages.under_snippet(snippet.source, trained, _build.library)
        lines[fence.last:fence.last] = [fence.indent + line if line else "" for line in added]
    return "\n".join(lines)


def on_pre_page(page, config, files):
    _build.page = page.file.src_uri
    _build.rendered.add(page.file.src_uri)


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
    # drops warnings before strict mode counts them, mkdocs issue 4126); serve prints them
    # (not through the "mkdocs" logger, whose errors strict mode counts) and goes on.
    messages = [failure.message(_build.page) for failure in _build.failures]
    _build.failures.clear()
    if messages and _command != "serve":
        raise PluginError("\n\n".join(messages))
    for message in messages:
        print(f"ERROR   -  {message}", file=sys.stderr)
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
    kept = execute.read_json(Path(config.site_dir, "build-report.json")) if _dirty else {}  # the pages not rendered
    snippets, notebooks = ([entry for entry in kept.get(part, []) if entry["page"] not in _build.rendered] + ours
                           for part, ours in (("snippets", _build.snippets), ("notebooks", _build.notebooks)))
    report.write(config.site_dir, snippets, notebooks, report.digests(config, _build.plan))
    execute._write(_marks_file(config), json.dumps(_build.marks).encode())


def on_build_error(error) -> None:
    if _build is not None and _build.run is not None:
        _build.run.close(failed=True)
