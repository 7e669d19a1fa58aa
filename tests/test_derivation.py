"""The derivation page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_score_std_is_sqrt_dk_within_3_percent(run_snippet):
    rows = run_snippet("derivation/score_std.py").namespace["result"]
    assert [r["d_k"] for r in rows] == [8, 16, 32, 64, 128, 256, 512]
    for r in rows:
        assert r["std_unscaled"] == pytest.approx(math.sqrt(r["d_k"]), rel=0.03)
        assert r["std_scaled"] == pytest.approx(1.0, rel=0.03)


def test_scaled_scores_are_standard_normal(run_snippet):
    samples = run_snippet("derivation/score_distribution.py").namespace["result"]
    for d_k, s in samples.items():
        z = s / math.sqrt(d_k)
        assert z.mean().item() == pytest.approx(0.0, abs=0.03)
        assert z.std().item() == pytest.approx(1.0, rel=0.03)
        # The share within one standard deviation matches the normal's 68.3%.
        assert (z.abs() < 1).float().mean().item() == pytest.approx(0.6827, abs=0.02)


def test_gap_grows_like_sqrt_dk_and_exceeds_20_at_128(run_snippet):
    rows = run_snippet("derivation/gap_ratio.py").namespace["result"]
    at = {(r["n"], r["d_k"]): r for r in rows}
    # The correction on the page: at d_k = 128 in rows of 64 keys the median gap is well above 20.
    assert at[(64, 128)]["gap_unscaled"] > 20
    assert math.exp(20) == pytest.approx(5e8, rel=0.05)
    for n in (8, 64, 512):
        scaled = [r["gap_scaled"] for r in rows if r["n"] == n]
        assert max(scaled) / min(scaled) < 1.15, "scaled gaps should not depend on d_k"
        assert at[(n, 512)]["gap_unscaled"] / at[(n, 8)]["gap_unscaled"] == pytest.approx(8.0, rel=0.15)
    # Longer rows have wider gaps.
    assert at[(8, 64)]["gap_unscaled"] < at[(64, 64)]["gap_unscaled"] < at[(512, 64)]["gap_unscaled"]


def test_realistic_init_constants(run_snippet):
    rows = run_snippet("derivation/realistic_init.py").namespace["result"]
    for r in rows:
        d_k = r["d_k"]
        if r["init"] == "default":  # Var(w) = 1/(3 d_model): a third of the unit model
            assert r["q_component_var"] == pytest.approx(1 / 3, rel=0.05)
            assert r["std_unscaled"] == pytest.approx(math.sqrt(d_k) / 3, rel=0.05)
        elif r["init"] == "normal":
            assert r["q_component_var"] == pytest.approx(1.0, rel=0.05)
            assert r["std_unscaled"] == pytest.approx(math.sqrt(d_k), rel=0.05)
        else:  # GPT-2's fixed 0.02: variance 0.0004 d_model
            assert r["q_component_var"] == pytest.approx(0.0004 * r["d_model"], rel=0.08)
    defaults = {r["d_k"]: r["std_unscaled"] for r in rows if r["init"] == "default"}
    assert defaults[64] == pytest.approx(2.7, abs=0.1) and defaults[128] == pytest.approx(3.8, abs=0.1)


def test_beyond_independence_matches_formulas_within_10_percent(run_snippet):
    namespace = run_snippet("derivation/beyond_independence.py").namespace
    for r in namespace["result"]:
        assert r["std"] == pytest.approx(r["predicted_std"], rel=0.10), r
        assert r["mean"] == pytest.approx(r["predicted_mean"], rel=0.10, abs=0.05 * r["predicted_std"]), r
        if r["case"] == "paired":  # the matched score grows like rho * d_k
            assert r["matched_mean"] == pytest.approx(namespace["RHO_PAIR"] * r["d_k"], rel=0.15)
        if r["case"] == "mean":  # softmax sees the row spread, about sqrt(d_k (1 + mu^2))
            assert r["row_spread"] == pytest.approx(math.sqrt(r["d_k"] * (1 + namespace["MEAN"] ** 2)), rel=0.05)


def test_only_inverse_sqrt_keeps_unit_variance(run_snippet):
    rows = run_snippet("derivation/scale_choice.py").namespace["result"]
    for r in rows:
        d_k = r["d_k"]
        expected = {"none": d_k, "1/sqrt(d_k)": 1.0, "1/d_k": 1.0 / d_k}[r["scaling"]]
        assert r["variance"] == pytest.approx(expected, rel=0.15)
    sharpest = {r["d_k"]: r["max_weight"] for r in rows if r["scaling"] == "none"}
    assert sharpest[512] > sharpest[8], "unscaled rows sharpen as d_k grows"


def test_worked_example(run_snippet):
    result = run_snippet("derivation/worked_example.py").namespace["result"]

    def softmax(z):
        e = [math.exp(x - max(z)) for x in z]
        return [x / sum(e) for x in e]

    for row in result.values():
        assert row["p"] == pytest.approx(softmax(row["logits"]), rel=1e-9)
    assert result["scaled"]["logits"] == [2.0, 1.0, 0.5]
    assert result["unscaled"]["p"][0] > 0.999
    assert result["scaled"]["jacobian_max"] / result["unscaled"]["jacobian_max"] > 100
