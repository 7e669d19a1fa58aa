"""The interview page's numbers: what its prose says about the printed table."""

from __future__ import annotations

import math

import pytest

from sdpa import survey

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_key_numbers(run_snippet):
    rows = {r["d_k"]: r for r in run_snippet("interview/key_numbers.py").namespace["result"]}
    for d_k, r in rows.items():
        # One measurement, quoted everywhere: the derivation's spread and the survey's rows.
        assert r["std"] == survey.spread(d_k)
        assert r["median_gap"] == survey.rows(d_k, 1.0).gap.median().item()
        assert r["std"] == pytest.approx(math.sqrt(d_k), rel=4 / math.sqrt(1000 * d_k))
        # "the gap in a row of 64 keys is several times larger" than the spread
        assert r["median_gap"] > 3 * r["sqrt_d_k"]
        # "everything is three times narrower" with the default initialisation
        assert r["median_gap_default"] == pytest.approx(r["median_gap"] / 3, rel=1e-12)
    # "e^gap astronomically large long before d_k = 128" (unit variance)
    assert rows[64]["weight_ratio"] > 1e10
    # "just under 20" at d_k = 128 with the default initialisation (between 15 and 20)
    assert 15 < rows[128]["median_gap_default"] < 20
    # "reads one or two keys ... below two at d_k = 64"; "only a minority of rows is one-hot"
    assert rows[64]["keys_unit"] < 2 and rows[128]["keys_unit"] < 2
    assert all(r["one_hot"] < 0.5 and r["one_hot_default"] < 0.5 for r in rows.values())
    # "about 40 of them in play" (the answer, includes/verdicts.md)
    assert all(35 < r["keys_scaled"] < 45 for r in rows.values())


def test_output_variance_is_bounded(run_snippet):
    rows = run_snippet("interview/output_variance.py").namespace["result"]
    for r in rows:
        # the variance of sum_j p_j v_j is sum_j p_j^2 (1,024 rows x 16 components: within 5%)
        assert r["measured"] == pytest.approx(r["predicted"], rel=0.05)
        # "neither exceeds 1": the bound is the one-hot row's, 1; the floor the uniform 1/64
        assert 1 / 64 <= r["predicted"] <= 1 and r["measured"] < 1
    none = [r["measured"] for r in rows if r["rule"].value == "none"]
    scaled = [r["measured"] for r in rows if r["rule"].value != "none"]
    # "climbs with d_k towards 1 (above half of it from d_k = 64 on)"
    assert none == sorted(none) and all(v > 0.5 for v in none[1:])
    # "scaled, it stays put at every d_k, a few times the uniform row's 1/64"
    assert max(scaled) / min(scaled) < 1.15 and all(1.5 / 64 < v < 5 / 64 for v in scaled)
