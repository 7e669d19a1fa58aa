"""ruff and actionlint (pinned in requirements.txt) find nothing: the same checks .ci/run makes.

The configuration is in pyproject.toml; snippets/ and docs/ narrow lines to 100 columns so
that a Source tab or a notebook cell never scrolls sideways on a desktop.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_reader_facing_code_is_narrow():
    """The 100-column limit really applies to snippets and the lab (not only the 120 default)."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--show-settings",
                           "snippets/sdpa/attention.py"], cwd=REPO, capture_output=True, text=True)
    assert "line_length = 100" in proc.stdout.replace("linter.line_length", "line_length")


def test_actionlint_finds_nothing_in_the_publishing_workflow():
    """The workflow that builds and deploys the published site (full profile) is valid."""
    binary = shutil.which("actionlint") or str(Path(sys.executable).with_name("actionlint"))
    assert (REPO / ".github" / "workflows" / "publish.yml").is_file()
    proc = subprocess.run([binary, "-no-color"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
