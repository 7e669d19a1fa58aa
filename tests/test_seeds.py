"""The seed offset: `pytest -m claims --seed-offset N` shifts every seed by N."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

from conftest import REPO, SEED_OFFSET_ENV
from sdpa import env, runtime


def test_offset_shifts_seed_and_generator(monkeypatch):
    monkeypatch.setenv(SEED_OFFSET_ENV, "3")
    assert runtime.seed_offset() == 3
    expected = torch.randn(4, generator=torch.Generator().manual_seed(8))
    assert torch.equal(torch.randn(4, generator=runtime.generator(5)), expected)
    assert torch.equal(torch.randn(4, generator=runtime.seed(5)), expected)
    assert torch.equal(torch.randn(4), torch.randn(4, generator=torch.Generator().manual_seed(8)))
    monkeypatch.delenv(SEED_OFFSET_ENV)
    assert runtime.seed_offset() == 0
    assert torch.equal(torch.randn(4, generator=runtime.generator(8)), expected)


def test_the_option_sets_the_variable(tmp_path):
    """`--seed-offset N` puts N in the variable before any snippet runs."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import os\n"
        "from sdpa import env\n"  # the offset's reader, without torch: a quicker probe
        "def test_probe():\n"
        f"    assert os.environ['{SEED_OFFSET_ENV}'] == '2' and env.seed_offset() == 2\n"
    )
    environment = env.environment({"PYTHONPATH": os.pathsep.join([str(REPO / "tests"), str(REPO / "snippets")])},
                                  drop=(SEED_OFFSET_ENV,))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
               "--seed-offset", "2", "--rootdir", str(tmp_path), str(probe)]
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_memoised_measurements_follow_the_offset(monkeypatch):
    """A measurement memoised at one offset is not returned at another."""
    from sdpa import survey

    monkeypatch.setenv(SEED_OFFSET_ENV, "7")
    at_seven = survey.spread(8)
    monkeypatch.setenv(SEED_OFFSET_ENV, "8")
    assert survey.spread(8) != at_seven
    monkeypatch.setenv(SEED_OFFSET_ENV, "7")
    assert survey.spread(8) == at_seven
