"""The one module that relies on how markdown-exec works inside (pinned in requirements.txt).

What it assumes, checked against the pinned version by ``tests/test_markdown_exec_adapter.py``:
(1) the plugin registers, in its ``on_config``, a pymdownx.superfences custom fence per
language, ``{"name": "python", "format": markdown_exec.formatter}``, whose options (from
``markdown_exec.validator``) are ``base_format``'s keywords, the fence's others (``title``)
under ``"extra"``; (2) ``base_format`` calls ``run(code, returncode=..., session=...,
id=..., **extra)`` and shows what it returns in Source/Result tabs; (3) the fence's ``id``
prefixes the HTML ids of its tabs, so two fences of a page never repeat one; (4) the Source
tab, behind the output, is ``<div class="tabbed-block">`` holding the highlighted code and
its ``<pre>`` (:data:`SOURCE_CODE`, which ``figures.py`` marks ``data-search-exclude``:
Material's search leaves it out, and the snippet's name, on the tab, stays in).
"""

from __future__ import annotations

import re
from typing import Callable

import markdown_exec
from mkdocs.exceptions import PluginError

from sitebuild.fences import FenceError


#: The Source tab's code, as markdown-exec writes it behind the output (``source="tabbed-right"``).
SOURCE_CODE = re.compile(r'(<div class="tabbed-block">\n<div class="highlight">'
                         r'<span class="filename">[^<]*</span>)<pre>')


def route_python_fences(mdx_configs: dict, fence_format: Callable) -> None:
    """Have markdown-exec's python fences formatted by ``fence_format`` (superfences' signature)."""
    fences = mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    python = [fence for fence in fences if fence.get("name") in ("python", "py")]
    if not python:
        raise PluginError("markdown-exec registered no python fence: is the plugin listed in mkdocs.yml?")
    for fence in python:
        fence["format"] = fence_format


def render(source: str, options: dict, md, run: Callable[[str, str], str]) -> str:
    """A python fence as markdown-exec draws it, ``run(code, title)`` giving what it printed."""
    title = options.get("extra", {}).get("title", "")
    if options.get("session"):
        raise FenceError(f"{title or 'a python fence'}: markdown-exec sessions are not used here; every "
                         "snippet runs alone")

    def run_block(code: str, returncode: int = 0, session: str = "", id: str = "", **extra) -> str:
        return run(code, extra.get("title") or id)

    # The id (defaulting to the title) prefixes the result's HTML ids: unique on the page
    # and the same in every build, as a cached result needs.
    options = {**options, "id": options.get("id") or title}
    return markdown_exec.base_format(language="python", run=run_block, code=source, md=md, **options)


def stored_record(code: str, filename: str) -> dict:
    """The run of the snippet ``filename``, read from the store (``python -m sitebuild.execute``,
    or a MkDocs build, fills it): for an engine without the build's hooks (Zensical)."""
    from sitebuild import execute

    plan = execute.Plan({}, {}, execute.code(), execute.device(), execute.store())
    record = execute.read(plan.record(execute.Snippet("", filename, code)))
    if record is None:
        raise FenceError(f"{filename}: the store ({plan.folder}) holds no run of it: run `python -m "
                         "sitebuild.execute` first")
    if record.get("failure") is not None:
        raise FenceError(execute.SnippetFailure(**record["failure"]).message(record["page"]))
    return record


def stored_fence(source, language, css_class, options, md, **kwargs) -> str:
    """A python fence from the store, with the lines the hooks add under MkDocs: the library
    code it used and the loop that trained it (superfences' formatter, in zensical.yml)."""
    from markdown_exec._internal.rendering import MarkdownConverter

    from sitebuild import LIBRARY_ROOT, code_pages, execute

    records = []
    html = render(source, options, md, lambda code, filename: records.append(stored_record(code, filename))
                  or records[-1]["output"])
    library = code_pages.library(execute.code(), (LIBRARY_ROOT,))
    trained = [name for record in records for name in record["trained"]]
    added = "\n".join(code_pages.under_snippet(source, trained, library))
    return str(html) + (str(MarkdownConverter(md).convert(added)) if added else "")
