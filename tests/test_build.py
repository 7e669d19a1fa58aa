"""The site builds strictly, renders every figure and table, and fails loudly."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SNIPPETS, included_snippets, mkdocs, network_can_be_cut, page_includes

FIGURE_SNIPPET = re.compile(r"\bFigure\(")
TABLE_SNIPPET = re.compile(r"\bmarkdown_table\(")


def page_html(site: Path, page: str) -> str:
    stem = page.removesuffix(".md")
    path = site / ("index.html" if stem == "index" else f"{stem}/index.html")
    return path.read_text()


@pytest.mark.parametrize("page", sorted(page_includes()))
def test_page_rendered_its_figures_and_tables(page, built_site):
    html = page_html(built_site, page)
    includes = page_includes()[page]
    figures = sum(len(FIGURE_SNIPPET.findall((SNIPPETS / s).read_text())) for s in includes)
    tables = sum(len(TABLE_SNIPPET.findall((SNIPPETS / s).read_text())) for s in includes)
    assert html.count('<figure class="sdpa-figure"') >= figures
    assert html.count("<table>") >= tables
    assert "Traceback (most recent call last)" not in html
    assert 'class="arithmatex"' not in html, "math left as TeX"
    for figure in re.findall(r'<figure class="sdpa-figure".*?</figure>', html, re.S):
        assert "<figcaption>" in figure and "<title id=" in figure, "figure without caption or text alternative"
    ids = re.findall(r'\bid="([^"]+)"', html)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"docs/{page}: ids repeated on the page: {duplicates[:5]}"


def test_a_second_build_offline_is_byte_identical(built_site, tmp_path):
    """A clean build in a fresh process, with the network cut where the OS allows it."""
    again = tmp_path / "again"
    offline = network_can_be_cut()
    if not offline and os.environ.get("CI"):
        pytest.fail("CI must be able to cut the network (unshare -rn) for this test")
    result = mkdocs("build", "--clean", "-d", str(again), check=True, offline=offline)
    alarming = [line for line in (result.stdout + result.stderr).splitlines() if not line.startswith("INFO")]
    assert not alarming, f"a clean build should print only MkDocs' INFO lines: {alarming}"
    made = ("*.html", "figures/*.svg", "figures/*.csv")  # pages and the figures' downloads
    first = sorted(p.relative_to(built_site) for glob in made for p in built_site.rglob(glob))
    second = sorted(p.relative_to(again) for glob in made for p in again.rglob(glob))
    assert first == second
    different = [str(p) for p in first if (built_site / p).read_bytes() != (again / p).read_bytes()]
    assert not different, f"pages that differ between two builds: {different}"


def test_build_report_lists_every_snippet_and_figure(built_site):
    report = json.loads((built_site / "build-report.json").read_text())
    ran = {entry["snippet"] for entry in report["snippets"]}
    assert {f"snippets/{s}" for s in included_snippets()} <= ran
    for entry in report["snippets"]:
        assert entry["seconds"] >= 0 and entry["device"] and entry["torch"] and not entry["cached"]
    reported = sorted(name for entry in report["snippets"] for name in entry["figures"])
    on_pages = sorted(  # the Markdown pages' figures (the lab notebook's come from its kernel)
        name for page in page_includes() for name in re.findall(r'id="fig-([^"]+)"', page_html(built_site, page))
    )
    assert reported == on_pages


def test_the_lab_notebook_is_offered_as_ipynb_and_as_its_script(built_site):
    import jupytext
    import nbformat

    page = (built_site / "lab" / "index.html").read_text()
    assert 'href="lab.ipynb"' in page and 'href="lab.py"' in page
    downloaded = nbformat.read(built_site / "lab" / "lab.ipynb", as_version=4)
    nbformat.validate(downloaded)
    source = jupytext.read(REPO / "docs" / "lab.py")
    assert [c.source for c in downloaded.cells[1:]] == [c.source for c in source.cells]
    assert "LIBRARY = {" in downloaded.cells[0].source, "the download's first cell should carry the library"
    assert (built_site / "lab" / "lab.py").read_text() == (REPO / "docs" / "lab.py").read_text()


def test_the_downloaded_notebook_runs_in_an_empty_folder(built_site, tmp_path_factory):
    """Outside the repository, with no snippets/ on any path: the notebook carries its library."""
    import nbclient
    import nbformat

    folder = tmp_path_factory.mktemp("download", numbered=True)
    assert not folder.is_relative_to(REPO)
    notebook = nbformat.read(built_site / "lab" / "lab.ipynb", as_version=4)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)
    written = sorted(p.relative_to(folder).as_posix() for p in (folder / "snippets").rglob("*.py"))
    assert "snippets/sdpa/__init__.py" in written
    for name in written:
        assert (folder / name).read_text() == (REPO / name).read_text(), name
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "shared library: snippets/sdpa" in printed


# ---- failing loudly, on throwaway copies --------------------------------------------

BROKEN_SNIPPET = """\
\"\"\"A snippet that raises on its fourth line.\"\"\"

def ratio():
    return 1 / 0

print(ratio())
"""


def throwaway_site(tmp_path: Path, page_body: str, snippet: str | None = BROKEN_SNIPPET) -> Path:
    """A copy of the real config with one page and one snippet of our own."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets" / "broken").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text(page_body)
    if snippet is not None:
        (tmp_path / "snippets" / "broken" / "boom.py").write_text(snippet)
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config["nav"] = [{"Home": "index.md"}]
    config["hooks"] = [str(REPO / hook) for hook in config["hooks"]]
    config.pop("extra_css", None)
    for extension in config["markdown_extensions"]:
        if isinstance(extension, dict) and "pymdownx.snippets" in extension:
            bases = extension["pymdownx.snippets"]["base_path"]  # the site's own (snippets, includes) too
            extension["pymdownx.snippets"]["base_path"] = [str(tmp_path / "snippets")] + [str(REPO / b) for b in bases]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


PAGE = '# Broken\n\n```python exec="on" title="snippets/broken/boom.py"\n--8<-- "broken/boom.py"\n```\n'


@pytest.mark.parametrize("flags", [[], ["-q"], ["-v"]], ids=["plain", "quiet", "verbose"])
def test_raising_snippet_fails_the_build_naming_file_and_line(tmp_path, flags):
    config = throwaway_site(tmp_path, PAGE)
    result = mkdocs("build", "-f", str(config), "-d", str(tmp_path / "site"), *flags)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "boom.py, line 4" in output
    assert "ZeroDivisionError: division by zero" in output


def test_missing_include_fails_the_build_naming_the_page_line(tmp_path):
    page = '# Broken\n\nText.\n\n```python exec="on" title="snippets/broken/nowhere.py"\n--8<-- "broken/nowhere.py"\n```\n'
    config = throwaway_site(tmp_path, page)
    result = mkdocs("build", "-f", str(config), "-d", str(tmp_path / "site"), "-q")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "index.md" in output and "line 6: the include 'broken/nowhere.py' is missing" in output, output
    assert "Traceback" not in output, output


def test_a_fence_must_name_the_file_it_runs(tmp_path):
    config = throwaway_site(tmp_path, '# Broken\n\n```python exec="on"\n--8<-- "broken/boom.py"\n```\n')
    result = mkdocs("build", "-f", str(config), "-d", str(tmp_path / "site"), "-q")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert 'line 3: the fence that includes \'broken/boom.py\' needs title="snippets/broken/boom.py"' in output


def test_broken_link_fails_the_build(tmp_path):
    config = throwaway_site(tmp_path, "# Broken\n\nSee [nothing](nowhere.md) and [here](#no-such-anchor).\n")
    result = mkdocs("build", "-f", str(config), "-d", str(tmp_path / "site"))
    assert result.returncode != 0
    assert "nowhere.md" in result.stdout + result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_keeps_serving_and_shows_the_error(tmp_path):
    config = throwaway_site(tmp_path, PAGE)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}", "--no-livereload"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    try:
        page = ""
        for _ in range(120):
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert server.poll() is None, "mkdocs serve stopped"
        assert "ZeroDivisionError" in page, "the page should show the traceback"
    finally:
        server.terminate()
        terminal = server.communicate(timeout=30)[0]
    assert "boom.py, line 4" in terminal
