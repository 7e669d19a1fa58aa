"""The interview page's numbers: what its prose says about the printed table."""

from __future__ import annotations

import math

import pytest

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_key_numbers(run_snippet):
    result = run_snippet("interview/key_numbers.py").namespace["result"]
    rows = {r["d_k"]: r for r in result["rows"]}
    for r in rows.values():
        assert r["std"] == pytest.approx(math.sqrt(r["d_k"]), rel=0.1)
        # the gap in a row of 64 keys is several times the spread
        assert r["median_gap"] > 3 * r["sqrt_d_k"]
        assert r["max_weight_scaled"] < 0.15
    # "a gap of 20 or more at d_k = 128" is an understatement
    assert rows[128]["median_gap"] > 20 and rows[128]["weight_ratio"] > 1e10
    assert rows[128]["max_weight"] > 0.8
    unscaled, scaled = result["example"]["unscaled"], result["example"]["scaled"]
    assert unscaled[0] > 0.999 and sum(unscaled) == pytest.approx(1.0)
    assert scaled[0] < 0.7 and min(scaled) > 0.1
