"""The explorable figure on the derivation page: its data, as the snippet computes it and
as the page carries it (the browser test in test_browser.py moves its controls)."""

from __future__ import annotations

import json
import math
import re

import pytest

SNIPPET = "derivation/explorable.py"
pytestmark = pytest.mark.pages("derivation.md")  # the page whose snippet the tests read (tests/harness.py)


@pytest.fixture(scope="module")
def run(run_snippet):
    return run_snippet(SNIPPET)


def test_the_page_carries_the_snippets_numbers(run):
    payload = re.search(r'<script type="application/json" class="sdpa-explorable-data">(.*?)</script>',
                        run.output, re.S).group(1)
    data = json.loads(payload)
    result = run.namespace["result"]
    assert data["d_k"] == result["d_k"] == [8, 16, 32, 64, 128, 256, 512, 1024]
    for rule, arm in result["arms"].items():
        for key in ("entropy", "norm"):
            assert data["arms"][rule][key] == pytest.approx(arm[key], rel=1e-4, abs=1e-9)
        for row, shown in zip(arm["row"], data["arms"][rule]["row"]):
            assert len(row) == result["n_keys"] and math.isclose(sum(row), 1, rel_tol=1e-5)
            assert shown == pytest.approx(row, rel=1e-4, abs=1e-9)


@pytest.mark.claims
def test_the_rules_do_what_the_caption_says(run):
    arms, n = run.namespace["result"]["arms"], run.namespace["result"]["n_keys"]
    none, sqrt, linear = arms["none"], arms["1/sqrt(d_k)"], arms["1/d_k"]
    # Unscaled: the median row turns one-hot (entropy and Jacobian norm fall towards 0).
    assert all(a > b for a, b in zip(none["median_entropy"], none["median_entropy"][1:]))
    assert none["median_entropy"][-1] < 0.01 and none["median_norm"][-1] < 1e-3
    # 1/sqrt(d_k): the same row statistics at every d_k (medians of 1,024 rows move by a
    # few hundredths from draw to draw).
    assert max(sqrt["median_entropy"]) - min(sqrt["median_entropy"]) < 0.15
    assert max(sqrt["median_norm"]) - min(sqrt["median_norm"]) < 0.05
    # 1/d_k: flatter and flatter, towards the uniform row (entropy ln n, norm 1/n).
    assert linear["median_entropy"][-1] > math.log(n) - 0.02
    assert linear["median_norm"][-1] < 1.1 / n
    for arm in arms.values():
        assert max(arm["norm"] + arm["median_norm"]) <= 0.5 + 1e-9
