"""Serve a built site on 127.0.0.1 and open it in the system's headless Chromium.

Shared by ``tests/test_browser.py`` and ``scripts/screenshots.py``. Playwright drives
Debian's ``chromium`` package (``/usr/bin/chromium``); it never downloads a browser.
"""

from __future__ import annotations

import ast
import functools
import http.server
import os
import re
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from sdpa import env
from sitebuild import code_pages

REPO = Path(__file__).resolve().parents[1]

#: Flags for a quiet, offline, sandbox-free headless Chromium (CI runs as root). Every
#: request that is not for this machine goes to a proxy at a port where nothing listens
#: (Chromium never proxies loopback addresses), so it fails at once, and the page visits
#: record it as a request to another host (``tests/test_browser.py``).
OFFLINE_PROXY = "http://127.0.0.1:9"
CHROMIUM_ARGS = [
    f"--proxy-server={OFFLINE_PROXY}",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: The two colour schemes; mkdocs.yml picks the palette from prefers-color-scheme.
SCHEMES = ("light", "dark")


def chromium_path() -> str | None:
    """The system Chromium, or None when it is absent. ``SDPA_CHROMIUM`` names another binary."""
    chosen = env.chromium()
    for candidate in (chosen,) if chosen else ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def unavailable(reason: str):
    """Skip a test that needs a browser (or a checker) the machine lacks; under CI (``CI``
    set) fail instead, so CI never skips it."""
    if env.ci():
        pytest.fail(f"{reason} (CI is set: this check must run, not skip)", pytrace=False)
    pytest.skip(reason)


def launch(playwright):
    """Launch the system Chromium through Playwright."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("no Chromium: install Debian's package with `apt-get install -y chromium`")
    return playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files, and ``replaced`` (site-relative path -> body) instead of those."""

    def __init__(self, *args, replaced: dict[str, bytes], **kwargs) -> None:
        self.replaced = replaced  # before the base class, which handles the request at once
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        body = self.replaced.get(self.path.lstrip("/").partition("?")[0])
        if body is None:
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(self.path))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@contextmanager
def serve(site: Path, replaced: dict[str, bytes] | None = None) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 from a thread, with the files of ``replaced`` (site-relative
    path -> body) replaced; yields the base URL (ending in '/')."""
    handler = functools.partial(_QuietHandler, directory=str(site), replaced=replaced or {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _AnyTagLoader(yaml.SafeLoader):
    """Reads mkdocs.yml even where it carries tags such as ``!!python/name:``."""


_AnyTagLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def nav_pages(config: Path = REPO / "mkdocs.yml") -> list[str]:
    """The source path of every local page in the nav, in nav order (e.g. 'derivation.md')."""
    nav = yaml.load(config.read_text(), Loader=_AnyTagLoader).get("nav") or []
    found: list[str] = []

    def walk(item) -> None:
        if isinstance(item, str):
            if "://" not in item:
                found.append(item)
        elif isinstance(item, list):
            for child in item:
                walk(child)
        elif isinstance(item, dict):
            for child in item.values():
                walk(child)

    walk(nav)
    return found


def token_classes(source: str) -> set[str]:
    """The CSS classes of the highlighted Python ``source``: Pygments' short names, which
    pymdownx.highlight gives each token's ``<span>`` (the nearest named parent type for a
    type that has none)."""
    from pygments.lexers import PythonLexer
    from pygments.token import STANDARD_TYPES

    classes = set()
    for kind, _ in PythonLexer().get_tokens(source):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        classes.add(STANDARD_TYPES[kind])
    return classes - {""}


#: Markdown in a docstring that mkdocstrings writes as an element of its own.
DOCSTRING_MARKUP = {"strong": r"\*\*\w", "em": r"(?<![*\w])\*\w[^*\n]*\*(?!\*)", "ol": r"(?m)^\s*1\. ",
                    "ul": r"(?m)^\s*[*-] "}


def page_features(source: str) -> set[str]:
    """What decides the kinds of element of a module's Code page: the token classes of its
    source, and what mkdocstrings writes from it (a class's bases, a decorator's label, the
    Markdown of its docstrings)."""
    tree, lines = ast.parse(source), source.splitlines(keepends=True)
    docstrings = "\n".join(ast.get_docstring(node) or "" for node in ast.walk(tree)
                           if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)))
    shown = "".join("".join(lines[min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1:
                                  node.end_lineno])  # the definitions, whose source the page shows
                    for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr)))
    features = token_classes(shown) | {kind for kind, markup in DOCSTRING_MARKUP.items()
                                       if re.search(markup, docstrings)}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.bases:
            features.add("class bases")
        for decorator in getattr(node, "decorator_list", []):
            features.add("decorator " + ast.unparse(decorator).split("(")[0].rpartition(".")[2])
    return features


def code_pages_in_full() -> list[str]:
    """The Code pages checked in full: the section's page, then, one at a time, the module
    page whose source adds the most :func:`page_features` not yet covered, until every one
    of every module is. The Code pages are one template (mkdocstrings') over the library's
    modules: these are also visited in the dark scheme (a dark visit adds only colour
    checks, and a colour follows from a class) and checked by axe-core (the others hold no
    kind of element these lack: ``tests/test_browser.py`` checks it)."""
    package = REPO / "snippets" / code_pages.PACKAGE
    features = {code_pages.page(".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(
        ".__init__")): page_features(path.read_text()) for path in sorted(package.rglob("*.py"))}
    chosen = [code_pages.SECTION]
    left = set().union(*features.values()) - features.get(code_pages.SECTION, set())
    while left:
        page = max(sorted(features), key=lambda page: len(features[page] & left))
        chosen.append(page)
        left -= features[page]
    return chosen


def page_url(source: str) -> str:
    """The site-relative URL of a page under ``use_directory_urls`` ('derivation.md' -> 'derivation/')."""
    stem = source.rsplit(".", 1)[0]
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def page_file(site: Path, source: str) -> Path:
    """The built HTML file of a page."""
    return site / page_url(source) / "index.html"


def built_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as site-relative URLs (the 404 page left out)."""
    urls = []
    for path in sorted(site.rglob("index.html")):
        rel = path.parent.relative_to(site).as_posix()
        urls.append("" if rel == "." else rel + "/")
    return urls
