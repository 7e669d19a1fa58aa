"""`python scripts/preview.py` shows one snippet's output in both schemes, without a site build."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys

import pytest

import tempfile
from pathlib import Path

from conftest import REPO, ahead, run_ahead

_SPEC = importlib.util.spec_from_file_location("preview", REPO / "scripts" / "preview.py")
preview_script = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(preview_script)
including_page = preview_script.including_page

SNIPPET = "derivation/score_distribution.py"


def start_preview() -> tuple[Path, subprocess.Popen]:
    """The preview of one real snippet, into a folder of its own, in a process of its own."""
    out = Path(tempfile.mkdtemp(prefix="sdpa-preview-"))
    command = [sys.executable, "scripts/preview.py", f"snippets/{SNIPPET}", "--out", str(out)]
    return out, subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


run_ahead("preview", start_preview)  # started as the session's tests are collected


@pytest.fixture(scope="module")
def preview():
    """(folder, page) of the preview."""
    out, process = ahead("preview", start_preview)
    output = process.communicate(timeout=600)[0]
    assert process.returncode == 0, output
    yield out, out / "derivation-score_distribution.html"
    shutil.rmtree(out, ignore_errors=True)


def test_preview_writes_the_output_in_light_and_dark(preview):
    out, path = preview
    page = path.read_text()
    assert page.count('data-md-color-scheme="default"') == 1 and page.count('data-md-color-scheme="slate"') == 1
    assert page.count('<figure class="sdpa-figure" id="fig-score-distribution"') == 1
    assert page.count('<figure class="sdpa-figure" id="dark-fig-score-distribution"') == 1
    assert page.count("<table>") == 2
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "the two copies repeat an id"
    for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', page):
        assert (out / href).is_file(), href
    assert any(href.endswith("assets/site.css") for href in re.findall(r'href="([^"]+\.css)"', page))
    downloads = re.findall(r'href="([^"#]+\.(?:svg|csv))"', page)
    assert downloads and all((out / href).is_file() for href in downloads), downloads


def test_the_one_page_site_is_the_page_that_includes_the_snippet(preview):
    """Named after docs/derivation.md, so a failing snippet's message names that page (not
    docs/index.md), and ``scripts/screenshots.py --site preview/site`` shoots it."""
    out, _ = preview
    assert including_page(SNIPPET) == "derivation.md"
    assert (out / "site" / "derivation" / "index.html").is_file()
    assert not (out / "site" / "index.html").exists()
    assert including_page("newpage/new_figure.py") == "newpage.md", "a snippet no page includes yet"


@pytest.mark.parametrize(("width", "side_by_side"), [(1280, True), (700, False)])
def test_light_and_dark_sit_side_by_side_on_a_wide_screen(preview, browser, width, side_by_side):
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(preview[1].as_uri(), wait_until="load")
        light, dark = page.locator("main.sdpa-preview").evaluate_all(
            "ms => ms.map(m => { const r = m.getBoundingClientRect(); return [r.left, r.top, r.width]; })")
    finally:
        page.close()
    if side_by_side:
        assert light[1] == dark[1] and light[0] < dark[0], (light, dark)
        assert light[2] == pytest.approx(width / 2, abs=10) and dark[2] == pytest.approx(width / 2, abs=10)
    else:
        assert light[0] == dark[0] and light[1] < dark[1], (light, dark)
