"""What keeps ``mkdocs serve`` quick after an edit: per-process memos of pure build steps.

A rebuild under ``mkdocs serve`` takes every snippet's output from the snippet cache
(:mod:`sitebuild.cache`), but MkDocs still reads its configuration again, renders every
page and indexes it for search. Most of that work repeats the last rebuild's on the
same input. Under ``serve`` only (:func:`remember_across_rebuilds`, once per process),
six steps remember their results, each keyed on every input it reads (an installed
package, which does not change while serving, aside), so an output is
reused only where the step would have made it again byte for byte:

* Material's search index: a page's entries, keyed on its URL, title, metadata, table
  of contents and HTML (the largest part of a rebuild: it parses every page's HTML); and
  the plugin's strip of ``data-search-`` attributes is skipped on a page without that text;
* a page's MathML (:mod:`sitebuild.math`, math-core): keyed on the page's HTML, for the
  last pages seen (a formula that fails is not remembered);
* code highlighting (pymdownx.highlight, Pygments): keyed on the code, the language,
  every option of the call and the highlighter's settings (the Code pages highlight the
  whole library); a block with a title is highlighted anew (its title goes into the
  page's HTML stash);
* mkdocs-jupyter's check of which files are notebooks (it parses every Markdown page
  with Jupytext, twice per build): keyed on the file's path and bytes and the plugin's
  patterns;
* Jinja's compiled templates: an in-memory bytecode cache, keyed by Jinja on the
  template's name and a checksum of its source;
* the list of an installed theme's files (Material's thousands of icons), walked once; the
  project's own theme folder is listed anew on every rebuild.

Besides, :func:`poll_often` has the server look for edits every 0.1 s instead of 0.5 s
(MkDocs polls the watched folders; one look at ``docs/`` and ``snippets/`` costs under a
millisecond), so an edit waits 0.05 s on average to be seen instead of 0.25 s.

``mkdocs build`` runs none of this: a clean build computes everything.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import inspect
from pathlib import Path

_installed = False


def _digest(*parts: object) -> str:
    """A key for ``parts``: each one's bytes (a string's UTF-8, anything else's ``repr``),
    its kind and its length before it, so that no two lists of parts share a key."""
    digest = hashlib.sha256()
    for part in parts:
        kind, data = ((b"b", part) if isinstance(part, bytes) else (b"s", part.encode()) if isinstance(part, str)
                      else (b"r", repr(part).encode()))
        digest.update(kind + len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _toc(items) -> list:
    """A page's table of contents as plain data (what the search entries read of it)."""
    return [(item.title, item.url, item.level, _toc(item.children)) for item in items or []]


def remember_search_entries() -> None:
    """Material's ``SearchIndex.add_entry_from_context``: the entries it adds for a page."""
    from material.plugins.search.plugin import SearchIndex

    original = SearchIndex.add_entry_from_context
    remembered: dict[str, list[dict]] = {}

    @functools.wraps(original)
    def add_entry_from_context(self, page):
        key = _digest(sorted((k, repr(v)) for k, v in self.config.items()), page.url, page.title,
                      sorted((k, repr(v)) for k, v in page.meta.items()), _toc(page.toc), page.content)
        if key not in remembered:
            before = len(self.entries)
            original(self, page)
            remembered[key] = [dict(entry) for entry in self.entries[before:]]
            return
        self.entries.extend(dict(entry) for entry in remembered[key])

    SearchIndex.add_entry_from_context = add_entry_from_context
    search_attributes_fast()


def search_attributes_fast() -> None:
    """Material's ``SearchPlugin.on_page_context`` indexes the page, then strips every
    ``data-search-…="…"`` attribute from its HTML with a regex that opens with ``\\s?``
    (tried at every position of the page): a page without the text ``data-search-`` has
    none to strip, and is left as it is without the regex (the same HTML)."""
    from material.plugins.search.plugin import SearchPlugin

    original = SearchPlugin.on_page_context

    @functools.wraps(original)
    def on_page_context(self, context, *, page, config, nav):
        if not self.config.enabled or "data-search-" in (page.content or ""):
            return original(self, context, page=page, config=config, nav=nav)
        self.search_index.add_entry_from_context(page)

    SearchPlugin.on_page_context = on_page_context


def remember_highlighting() -> None:
    """pymdownx's ``Highlight.highlight`` (Pygments behind it): the HTML of a code block."""
    from pymdownx.highlight import Highlight

    original = Highlight.highlight
    signature = inspect.signature(original)
    remembered: dict[str, str] = {}

    @functools.wraps(original)
    def highlight(self, src, language, *args, **kwargs):
        if signature.bind(self, src, language, *args, **kwargs).arguments.get("title"):  # into the stash: not pure
            return original(self, src, language, *args, **kwargs)
        settings = sorted((k, repr(v)) for k, v in vars(self).items() if k != "md")
        key = _digest(settings, src, language, args, sorted(kwargs.items()))
        if key not in remembered:
            remembered[key] = original(self, src, language, *args, **kwargs)
        return remembered[key]

    Highlight.highlight = highlight


def remember_notebook_checks() -> None:
    """mkdocs-jupyter's ``should_include``: whether a file is a notebook page."""
    from mkdocs_jupyter.plugin import Plugin

    original = Plugin.should_include
    remembered: dict[str, bool] = {}

    @functools.wraps(original)
    def should_include(self, file):
        path = file.abs_src_path
        if path is None or not Path(path).is_file():
            return original(self, file)
        key = _digest(path, Path(path).read_bytes(), self.config["include"], self.config["ignore"])
        if key not in remembered:
            remembered[key] = original(self, file)
        return remembered[key]

    Plugin.should_include = should_include


MATH_PAGES = 64  # the pages' MathML kept (a page edited while serving makes a new entry)


def remember_math() -> None:
    """:func:`sitebuild.math.render_math` (math-core and the MathML edits): a page's HTML
    with its formulas converted, keyed on that HTML (math-core converts a list of formulas
    with no state kept from one call to the next). A formula that fails is not remembered:
    it fails again, with its message, on every rebuild."""
    from sitebuild import math

    original = math._MathML.run
    remembered: collections.OrderedDict[str, str] = collections.OrderedDict()

    @functools.wraps(original)
    def run(self, text: str) -> str:
        if not math.MATH.search(text):
            return text
        key = _digest(text)
        if key in remembered:
            remembered.move_to_end(key)
            return remembered[key]
        converted = remembered[key] = original(self, text)
        if len(remembered) > MATH_PAGES:
            remembered.popitem(last=False)
        return converted

    math._MathML.run = run


class _Templates(dict):
    """Compiled templates by Jinja's key (name and source checksum), for the process."""

    def set(self, key, value, timeout=None) -> None:  # noqa: A003 - the client protocol's name
        self[key] = value


def remember_templates() -> None:
    """Every Jinja environment of the theme shares one in-memory bytecode cache."""
    import jinja2
    from mkdocs.theme import Theme

    cache = jinja2.MemcachedBytecodeCache(_Templates(), prefix="")
    original = Theme.get_env

    @functools.wraps(original)
    def get_env(self):
        env = original(self)
        env.bytecode_cache = cache
        return env

    Theme.get_env = get_env


def remember_installed_theme_files() -> None:
    """Jinja's ``FileSystemLoader.list_templates`` (MkDocs lists the theme's files on every
    build: Material's folder holds thousands of icons) walks a folder of an installed
    package once per process; the project's own theme folder (``custom_dir``) is walked
    every time, so an override added while serving is found. The list is the same."""
    import os
    import sysconfig

    from jinja2 import FileSystemLoader

    installed = tuple(os.path.realpath(sysconfig.get_paths()[key]) + os.sep for key in ("purelib", "platlib"))
    walked: dict[tuple[str, bool], list[str]] = {}

    def templates(searchpath: str, followlinks: bool) -> list[str]:
        found = []
        for dirpath, _, filenames in os.walk(searchpath, followlinks=followlinks):
            for filename in filenames:
                template = os.path.join(dirpath, filename)[len(searchpath):].strip(os.sep).replace(os.sep, "/")
                found.append(template[2:] if template[:2] == "./" else template)
        return found

    def list_templates(self) -> list[str]:
        found: set[str] = set()
        for searchpath in self.searchpath:
            if not os.path.realpath(searchpath).startswith(installed):
                found.update(templates(searchpath, self.followlinks))
                continue
            key = (searchpath, self.followlinks)
            if key not in walked:
                walked[key] = templates(searchpath, self.followlinks)
            found.update(walked[key])
        return sorted(found)

    FileSystemLoader.list_templates = list_templates


POLL_SECONDS = 0.1


def poll_often(server, seconds: float = POLL_SECONDS):
    """The live-reload server's file watcher looks every ``seconds`` (MkDocs: 0.5): its
    polling observer gives the interval to each folder's emitter as it is scheduled."""
    observer = server.observer
    observer._timeout = seconds  # for the folders scheduled after this (the config's watch:)
    for emitter in list(getattr(observer, "emitters", ())):  # and those already watched (docs/)
        emitter._timeout = seconds
    return server


def remember_across_rebuilds() -> None:
    """Install the memos above, once per process (``mkdocs serve`` calls this at startup)."""
    global _installed
    if _installed:
        return
    _installed = True
    remember_search_entries()
    remember_highlighting()
    remember_math()
    remember_notebook_checks()
    remember_templates()
    remember_installed_theme_files()
