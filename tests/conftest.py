"""Shared fixtures: which snippets the pages include, running them, building the site."""

from __future__ import annotations

import os
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

for path in (SNIPPETS, REPO):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from sitebuild.fences import executed_fences  # noqa: E402

#: The variable through which sdpa.runtime adds an offset to every seed.
SEED_OFFSET_ENV = "SDPA_SEED_OFFSET"


def pytest_addoption(parser):
    parser.addoption(
        "--seed-offset", type=int, default=None, metavar="N",
        help="add N to every seed the snippets, the library and the notebook draw "
        f"(sets {SEED_OFFSET_ENV}); with -m claims, reruns every claim on other draws",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "claims: asserts what a page says about a measured (random) quantity; "
        "`pytest -m claims --seed-offset N` reruns these with every seed shifted by N",
    )
    offset = config.getoption("--seed-offset")
    if offset is not None:  # set before any snippet runs; child processes inherit it
        os.environ[SEED_OFFSET_ENV] = str(offset)


def page_includes() -> dict[str, list[str]]:
    """Every page under docs/ mapped to the snippets its executed fences include."""
    return {
        str(page.relative_to(DOCS)): [path for fence in executed_fences(page.read_text()) for _, path in fence.includes]
        for page in sorted(DOCS.rglob("*.md"))
    }


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


def mkdocs(*args: str, cwd: Path = REPO, timeout: int = 900, check: bool = False,
           offline: bool = False) -> subprocess.CompletedProcess:
    """Run the mkdocs command line in a fresh process (never reading the snippet cache).

    ``offline=True`` runs it in a new network namespace whose only interface is loopback
    (``unshare -rn``, then ``ip link set lo up`` for the notebook kernel's local sockets),
    to show that building needs no network.
    """
    env = {k: v for k, v in os.environ.items() if k != "SDPA_CACHE"}
    env.update(NO_MKDOCS_2_WARNING="1", SDPA_CACHE="0")
    command = [sys.executable, "-m", "mkdocs", *args]
    if offline:
        command = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"mkdocs {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def network_can_be_cut() -> bool:
    try:
        probe = ["unshare", "-rn", "sh", "-c", "ip link set lo up"]
        return subprocess.run(probe, capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The whole site, built once per test session into a temporary folder.

    The build runs in this process, through MkDocs' own API, so the experiments that the
    library memoises are computed once for the build and the snippet tests together.
    ``SDPA_BUILT_SITE=<folder>`` takes a site you built yourself instead (to iterate on the
    site's tests without rebuilding; never set in CI).
    """
    if os.environ.get("SDPA_BUILT_SITE"):
        return Path(os.environ["SDPA_BUILT_SITE"]).resolve()
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site = tmp_path_factory.mktemp("site")
    os.environ.pop("SDPA_CACHE", None)
    os.environ["NO_MKDOCS_2_WARNING"] = "1"
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(site))
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    finally:
        os.chdir(cwd)
    return site
