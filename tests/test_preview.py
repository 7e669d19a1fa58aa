"""`python -m sitebuild.preview` shows one snippet's output in both schemes, without a site build."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_preview_writes_the_output_in_light_and_dark(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sitebuild.preview", "snippets/derivation/score_distribution.py",
         "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    page = (tmp_path / "derivation-score_distribution.html").read_text()
    assert page.count('data-md-color-scheme="default"') == 1 and page.count('data-md-color-scheme="slate"') == 1
    assert page.count('<figure class="sdpa-figure" id="fig-score-distribution"') == 1
    assert page.count('<figure class="sdpa-figure" id="dark-fig-score-distribution"') == 1
    assert page.count("<table>") == 2
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "the two copies repeat an id"
    for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', page):
        assert (tmp_path / href).is_file(), href
    assert any(href.endswith("assets/site.css") for href in re.findall(r'href="([^"]+\.css)"', page))

