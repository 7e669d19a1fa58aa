"""The claims of the page on what the factor does not fix, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def _monotone(values, increasing):
    pairs = list(zip(values, values[1:]))
    return all(b >= a - 1e-12 for a, b in pairs) if increasing else all(b <= a + 1e-12 for a, b in pairs)


def test_sequence_length_fade_and_log_n_scaling(run_snippet):
    namespace = run_snippet("limits/sequence_length.py").namespace
    rows = namespace["result"]
    at = {(r["rho"], r["n"], r["arm"]): r for r in rows}
    first, last = namespace["LENGTHS"][0], namespace["LENGTHS"][-1]
    assert (first, last) == (16, 16384)
    for rho in namespace["RHOS"]:
        start = at[(rho, first, "fixed")]
        assert at[(rho, first, "log n")]["match_weight"] == start["match_weight"]
        # Fixed scale: under 5% of the match's weight is left, entropy within 0.7 nats of log n.
        assert at[(rho, last, "fixed")]["match_weight"] < 0.05 * start["match_weight"]
        assert math.log(last) - at[(rho, last, "fixed")]["entropy"] < 0.7
        fixed_curve = [at[(rho, n, "fixed")]["match_weight"] for n in namespace["LENGTHS"]]
        assert _monotone(fixed_curve, increasing=False)
    strong, weak = 0.7, 0.5
    for n in namespace["LENGTHS"]:  # the strong match keeps its weight within 10% at every n
        assert at[(strong, n, "log n")]["match_weight"] == pytest.approx(
            at[(strong, first, "fixed")]["match_weight"], rel=0.10)
        assert at[(strong, n, "log n")]["entropy"] < 1.5
    # The weaker match fades under log-n scaling to about half of its weight (40% to 60%).
    kept = at[(weak, last, "log n")]["match_weight"] / at[(weak, first, "log n")]["match_weight"]
    assert 0.4 < kept < 0.6


def test_soft_capping_shrinks_the_mean_gradient_but_grows_most_rows(run_snippet):
    namespace = run_snippet("limits/soft_capping.py").namespace
    at = {(r["spread"], r["cap"]): r for r in namespace["result"]}
    caps = namespace["CAPS"]
    assert caps == [50.0, 30.0]
    for cap in caps:
        # Small logits: nothing measurable changes.
        assert at[1.0, cap]["max_weight"] == pytest.approx(at[1.0, None]["max_weight"], rel=0.01)
        # Never beyond the cap.
        assert all(r["max_abs_logit"] <= cap for (_, c), r in at.items() if c == cap)
        # Large spread: the capped rows are far flatter than the nearly one-hot uncapped ones.
        assert at[100.0, None]["max_weight"] > 0.95
        assert at[100.0, cap]["max_weight"] < 0.2
        for spread in (20.0, 50.0, 100.0):
            capped, plain = at[spread, cap], at[spread, None]
            # Averaged over rows the cap shrinks the Jacobian ...
            assert capped["jacobian_mean"] < plain["jacobian_mean"]
            # ... but in most rows it grows it (more than four standard errors above one half),
            assert capped["capped_larger"] - 4 * capped["capped_larger_se"] > 0.5
            # and the median row's by more than 5x at 20 and three orders of magnitude beyond.
            factor = 5 if spread == 20.0 else 1e3
            assert capped["jacobian_median"] > factor * plain["jacobian_median"]
            # The uncapped mean is carried by a few rows: far above the uncapped median.
            assert plain["jacobian_mean"] > 5 * plain["jacobian_median"]


def test_small_heads_are_noisy(run_snippet):
    namespace = run_snippet("limits/small_dk_noise.py").namespace
    rows, rho = namespace["result"], namespace["RHO"]
    for r in rows:
        # "within 8%": the std of 2,000 products' estimates is off by 2-2.5% (one SD) at small d_k,
        # up to 6.6% over 8 d_k x seed offsets 0-19
        assert r["estimate_std"] == pytest.approx(math.sqrt((1 + rho**2) / r["d_k"]), rel=0.08)
        se = r["predicted_std"] / math.sqrt(namespace["N_QUERIES"])
        assert r["estimate_mean"] == pytest.approx(rho, abs=4 * se)  # 160 draws over offsets 0-19: up to 3.5 SE
        # Dividing by sqrt(d_k) changes no ranking.
        assert r["same_argmax"]
    top1 = {r["d_k"]: r["top1"] for r in rows}
    assert all(top1[d] < 0.10 for d in top1 if d <= 4)
    assert all(top1[d] > 0.99 for d in top1 if d >= 128)
    assert _monotone([top1[d] for d in sorted(top1)], increasing=True)
