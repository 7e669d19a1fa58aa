"""Shared fixtures: which snippets the pages include, running them, building the site."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"
LIBRARY = "sdpa"

if str(SNIPPETS) not in sys.path:
    sys.path.insert(0, str(SNIPPETS))

EXEC_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})python\b[^\n]*\bexec=\S+[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
INCLUDE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+["']([^"']+)["']""", re.M)


def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    pages = {}
    for page in sorted(DOCS.rglob("*.md")):
        found = [inc for _, body in EXEC_FENCE.findall(page.read_text()) for inc in INCLUDE.findall(body)]
        pages[str(page.relative_to(DOCS))] = found
    return pages


def included_snippets() -> list[str]:
    return sorted({snippet for found in page_includes().values() for snippet in found})


@dataclass
class SnippetRun:
    namespace: dict
    output: str


@cache
def _run(snippet: str) -> SnippetRun:
    chunks: list[str] = []

    def captured_print(*texts, end="\n", **_):  # what markdown-exec does with print
        chunks.append(" ".join(str(t) for t in texts) + end)

    namespace = runpy.run_path(str(SNIPPETS / snippet), init_globals={"print": captured_print}, run_name="__snippet__")
    return SnippetRun(namespace, "".join(chunks))


@pytest.fixture(scope="session")
def run_snippet():
    """Run a snippet once per test session (as the build does) and keep its data."""
    return _run


def mkdocs(*args: str, cwd: Path = REPO, timeout: int = 900, check: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONHASHSEED": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"mkdocs {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The whole site, built once per test session into a temporary folder."""
    site = tmp_path_factory.mktemp("site")
    mkdocs("build", "--clean", "-d", str(site), check=True)
    return site
