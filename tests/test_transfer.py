"""The page on learning rates across head sizes: every claim, read from the tuned sweeps."""

from __future__ import annotations

import math

import pytest

from sdpa.attention import Scale
from sdpa.sizes import sizes
from sdpa.transfer import predicted_lr_exponent

pytestmark = pytest.mark.claims

PLANE = sizes().plane
NONE, SQRT, INV = Scale.NONE, Scale.INV_SQRT, Scale.INV
D_KS = PLANE.d_ks


def at(values: list, d_k: int):
    """The entry for ``d_k`` of a list with one entry per d_k of the sweeps (``D_KS``)."""
    return values[D_KS.index(d_k)]


@pytest.fixture(scope="module")
def transfer(run_snippet):
    rows = run_snippet("transfer/best_rates.py").namespace["result"]
    return {(r["optimizer"], r["rule"]): r for r in rows}


def test_the_predictions_follow_from_the_step_sizes():
    """Invariant W keeps W_Q and W_K's step: Adam's is the rate, SGD's the rate times kappa
    (the rule's factor over 1/sqrt(d_k)); invariant L keeps the logits' step, kappa times the
    weights'. A rule's best rate is then the 1/sqrt(d_k) head's divided by (its step per unit
    rate); its exponent in d_k follows from kappa = d_k^a, checked here at two head sizes
    rather than by restating the formula."""
    kappa = {NONE: lambda d: d**0.5, SQRT: lambda d: 1.0, INV: lambda d: d**-0.5}
    step = {("adam", "weights"): lambda k: 1, ("sgd", "weights"): lambda k: k,
            ("adam", "logits"): lambda k: k, ("sgd", "logits"): lambda k: k * k}
    for (optimizer, invariant), per_rate in step.items():
        for rule in (NONE, SQRT, INV):
            best = [1 / per_rate(kappa[rule](d)) for d in (16, 256)]  # relative to 1/sqrt(d_k)
            measured = math.log(best[1] / best[0]) / math.log(256 / 16)
            assert predicted_lr_exponent(optimizer, rule, invariant) == pytest.approx(measured)


def closer(measured: float, to: float, than: float) -> float:
    """How much closer ``measured`` lies to ``to`` than to ``than`` (positive: closer)."""
    return abs(measured - than) - abs(measured - to)


@pytest.mark.profiles("full")
def test_the_unscaled_head_fits_invariant_w_under_adam(transfer, claim):
    """"closer to invariant W's 0 than to invariant L's -1/2" (Adam), and "within a factor of
    two of the scaled head's at every d_k"."""
    r = transfer[("adam", NONE)]
    claim.above("Adam, no factor: closer to W than to Z", closer(r["relative_slope"], 0, -0.5), 0)
    for d_k, ratio in zip(D_KS, r["ratio"]):
        claim.between(f"Adam, no factor, d_k = {d_k}: best rate over 1/sqrt(d_k)'s (log)",
                      math.log(ratio), math.log(1 / 2), math.log(2))


@pytest.mark.profiles("full")
def test_sgd_unscaled_best_rate_falls_with_dk(transfer, claim):
    r = transfer[("sgd", NONE)]
    claim.below("SGD, no factor: ratio at 256 over ratio at 16", at(r["ratio"], 256) / at(r["ratio"], 16),
                1 / 1.5, log=True)


@pytest.mark.profiles("full")
def test_adam_inverse_dk_lies_between_the_two_predictions(transfer, claim):
    r = transfer[("adam", INV)]
    low, high = sorted(r["predicted"].values())  # 0 and +1/2
    claim.between("Adam, 1/d_k: relative slope, give or take 0.1", r["relative_slope"], low - 0.1, high + 0.1)


@pytest.mark.profiles("full")
def test_only_sgd_keeps_the_scaled_rules_best_rate(transfer, claim):
    sgd, adam = transfer[("sgd", SQRT)]["best"], transfer[("adam", SQRT)]["best"]
    claim.below("SGD, 1/sqrt(d_k): largest over smallest best rate", max(sgd) / min(sgd), 2, log=True)
    claim.below("Adam, 1/sqrt(d_k): best rate at 256 over at 16", at(adam, 256) / at(adam, 16), 0.5, log=True)
    claim.below("Adam, 1/sqrt(d_k): slope", transfer[("adam", SQRT)]["slope"], -0.25)
    for rule in (r for r in Scale if r is not SQRT):  # "and so do the other rules' best rates"
        best = transfer[("adam", rule)]["best"]
        claim.below(f"Adam, {rule.value}: best rate at 256 over at 16", at(best, 256) / at(best, 16), 1, log=True)


def test_the_measured_gradient_ratio_grows_slower_than_the_factor(transfer, claim):
    """"Saturation breaks that": at initialisation the unscaled head's |grad W_Q| over the
    scaled head's grows with d_k more slowly than the factor's sqrt(d_k) (an exponent below
    one half), while 1/d_k's shrinks like its factor (rows near uniform)."""
    if len(D_KS) < 3:
        pytest.skip("the quick build measures one head size")
    claim.below("no factor: slope of the gradient ratio", transfer[("sgd", NONE)]["gradient_slope"], 0.45)
    claim.near("1/d_k: slope of the gradient ratio", transfer[("sgd", INV)]["gradient_slope"], -0.5, tol=0.05)
