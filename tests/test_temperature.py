"""The temperature page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest

from sdpa import survey
from sdpa.attention import Scale

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def _monotone(values, increasing):
    pairs = list(zip(values, values[1:]))
    return all(b >= a - 1e-12 for a, b in pairs) if increasing else all(b <= a + 1e-12 for a, b in pairs)


def test_temperature_limits_and_monotonicity(run_snippet, claim):
    r = run_snippet("temperature/softmax_temperature.py").namespace["result"]
    temps = r["temperatures"]
    assert temps[0] == pytest.approx(0.01) and temps[-1] == pytest.approx(100)
    # T -> 0: argmax (a few near-ties keep the mean just below 1); 4,096 rows, since 512 left
    # margins of 2.5 and 3.0 over six offsets.
    claim.above("T = 0.01: mean largest weight", r["max_weight"][0], 0.98)
    claim.below("T = 0.01: mean entropy", r["entropy"][0], 0.05)
    # T -> infinity: uniform.
    claim.near("T = 100: entropy log n", r["entropy"][-1], r["log_n"], rel=1e-3)
    claim.near("T = 100: largest weight 1/n", r["max_weight"][-1], 1 / r["n"], rel=0.05)
    # dH/dT = Var_p(z) / T^3 >= 0, and the largest weight falls monotonically.
    assert _monotone(r["entropy"], increasing=True)
    assert _monotone(r["max_weight"], increasing=False)
    for t, row in r["example"].items():
        assert sum(row) == pytest.approx(1.0, abs=1e-6)
    assert r["example"][0.25][0] > r["example"][1.0][0] > r["example"][4.0][0]


def test_sqrt_dk_is_comparable_across_dk_a_fixed_temperature_is_not(run_snippet, claim):
    namespace = run_snippet("temperature/fixed_temperature.py").namespace
    rows, fixed_t = namespace["result"], namespace["FIXED_T"]
    scaled = {r["d_k"]: r for r in rows if not r["fixed"]}
    fixed = {r["d_k"]: r for r in rows if r["fixed"]}
    for d_k, r in scaled.items():
        # The derivation's spread and its relative standard error.
        claim.near(f"scaled std 1 at {d_k}", r["std"], 1.0, rel=5 * survey.spread_se(d_k))
        assert fixed[d_k]["std"] == pytest.approx(r["std"] * math.sqrt(d_k) / fixed_t, rel=1e-5)
    wide = [r["max_weight"] for r in scaled.values()]  # every d_k, from 4 up
    mean = sum(wide) / len(wide)
    for d_k, w in zip(scaled, wide):
        claim.near(f"scaled largest weight at {d_k}, as at every d_k", w, mean, rel=0.15)
    # The fixed temperature matches 1/sqrt(d_k) only at d_k = T^2 ...
    assert fixed[64]["max_weight"] == pytest.approx(scaled[64]["max_weight"], rel=1e-6)
    # ... and the largest weight grows more than tenfold from d_k = 8 to 512.
    claim.above("fixed T: largest weight, 512 over 8", fixed[512]["max_weight"] / fixed[8]["max_weight"], 10, log=True)
    assert _monotone([fixed[d]["max_weight"] for d in sorted(fixed)], increasing=True)


# ----------------------------------------------------------------------- training runs


def test_logit_growth_after_training(run_snippet, claim):
    run = run_snippet("temperature/logit_growth.py")
    result = run.namespace["result"]
    # "near 0.5 at initialisation, closer to it than to 0 or to 1": the midpoints between the
    # exponent of independent components and those of no growth and of aligned components
    # (the band 0.5 +- 0.2 was set beside a sweep's range, 0.38-0.55: a margin of 2.5 over ten
    # independent seed blocks)
    for label, fit in result["fits"].items():
        claim.between(f"{label.value}: slope before training, nearer 0.5 than 0 or 1", fit["before"], 0.25, 0.75)
    # "larger after training" for the unscaled and 1/d_k heads (1/sqrt(d_k)'s rise had a margin
    # of 2.5 over six offsets: the snippet prints it, with its interval, instead)
    for rule in (Scale.NONE, Scale.INV):
        fit = result["fits"][rule]
        claim.above(f"{rule.value}: slope after training over the slope before", fit["after"] - fit["before"], 0)
    assert "training raised the exponent by" in run.output
    scaled = {rule: [r["scaled_after"] for r in result["rows"] if r["scale"] is rule]
              for rule in result["fits"]}
    # 1/d_k: "do not grow with d_k: they fall a little" (last / first 0.6-0.8 over offsets 0-5)
    claim.below("1/d_k: scaled logits fall, last / first", scaled[Scale.INV][-1] / scaled[Scale.INV][0], 1, log=True)
    claim.above("1/sqrt(d_k): scaled logits grow, last / first", scaled[Scale.INV_SQRT][-1] / scaled[Scale.INV_SQRT][0],
                1, log=True)
    growth = {rule: values[-1] / values[0] for rule, values in scaled.items()}
    claim.above("unscaled logits grow more than twice as much as 1/sqrt(d_k)'s",
                growth[Scale.NONE] / growth[Scale.INV_SQRT], 2, log=True)


def test_learned_temperature_barely_moves(run_snippet, claim):
    run = run_snippet("temperature/learned_temperature.py")
    result = run.namespace["result"]
    learned, fixed = result["learned"], result["fixed"]
    # "ends below its start on average over the seeds" (how far: printed, with its interval;
    # "in every seed" had a margin of 2.6 over ten independent seed blocks); "the raw scores
    # grow in every seed"
    finals = [r[-1] for r in learned["scale_ratio"]]
    claim.below("learned scale: geometric mean final ratio over the seeds",
                math.exp(sum(map(math.log, finals)) / len(finals)), 1, log=True)
    claim.above("raw logits: smallest final ratio over the seeds", min(r[-1] for r in learned["raw_ratio"]),
                1, log=True)
    assert "In this build the learned scale ends at" in run.output
    assert all(s == pytest.approx(result["init_scale"]) for s in fixed["final_scale"])
    claim.above("learned scale: final accuracy", learned["final_accuracy"], 0.95)
    claim.above("fixed scale: final accuracy", fixed["final_accuracy"], 0.95)


def test_adam_equivalence(run_snippet, claim):
    result = run_snippet("temperature/adam_equivalence.py").namespace["result"]
    assert result["r"] == 0.5, "d_k^(-1/4) a power of two: the rescaling is exact"
    # (a) and (b): the same run, bit for bit: every loss, W_Q and W_K (times r), every seed
    assert result["b_equals_a"] and result["max_diff_b"] == 0.0
    assert result["b_weights_equal"]
    # Step 2 of the derivation: the gradient on W_Q is 1/r = d_k^(1/4) times larger in (b), exactly.
    assert result["b_gradient_is_a_over_r"]
    # Folding the constant into the initialisation alone: the same start, different training
    # ("departs by more than a tenth of a nat": it departs by about one)
    assert result["step0_diff_c"] == 0.0
    claim.above("(c) departs from (a): largest loss difference", result["max_diff_c"], 0.1, log=True)
