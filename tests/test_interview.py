"""The interview page's numbers: what its prose says about the printed table."""

from __future__ import annotations

import math

import pytest

from sdpa import survey

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_key_numbers(run_snippet, claim):
    """The table the page prints, from the one measurement every page quotes (its words are the
    verdicts it includes: the derivation's and the failure-modes page's, tested there)."""
    rows = {r["d_k"]: r for r in run_snippet("interview/key_numbers.py").namespace["result"]}
    for d_k, r in rows.items():
        assert r["std"] == survey.spread(d_k)
        assert r["median_gap"] == survey.rows(d_k, 1.0).gap.median().item()
        # e^lead, the quantity the derivation's gap verdict (included above the table) names:
        # the top key's lead over the runner-up, as derivation/top_lead.py measures it
        top, second = survey.rows(d_k, 1.0).z.topk(2, -1).values.unbind(-1)
        assert r["median_lead"] == (top - second).median().item()
        assert r["weight_ratio"] == math.exp(r["median_lead"])
        claim.near(f"std sqrt(d_k) at {d_k}", r["std"], math.sqrt(d_k), rel=5 / math.sqrt(1000 * d_k))
        # "default init": components of variance 1/3, so every logit a third as wide, exactly
        assert r["median_gap_default"] == pytest.approx(r["median_gap"] / 3, rel=1e-12)


def test_output_variance_is_bounded(run_snippet, claim):
    """includes/verdicts/interview.md, section output-variance, beside the snippet it reads."""
    rows = run_snippet("interview/output_variance.py").namespace["result"]
    for r in rows:
        at = f'{r["rule"].value} at {r["d_k"]}'
        # the variance of sum_j p_j v_j is sum_j p_j^2, within five standard errors of the
        # measured variance (over the 1,024 rows: about 1-3% of it)
        claim.near(f"{at}: variance sum p^2", r["measured"], r["predicted"], tol=5 * r["measured_se"])
        # "neither exceeds 1": the bound is the one-hot row's, 1; the floor the uniform 1/64
        assert 1 / 64 <= r["predicted"] <= 1
        claim.below(f"{at}: measured variance", r["measured"], 1)
    none = [r for r in rows if r["rule"].value == "none"]
    scaled = [r["measured"] for r in rows if r["rule"].value != "none"]
    # "climbs with d_k towards 1 (above half of it from d_k = 64 on)"
    for a, b in zip(none, none[1:]):
        claim.above(f'unscaled variance climbs, {a["d_k"]} to {b["d_k"]}', b["measured"], a["measured"])
        claim.above(f'unscaled variance at {b["d_k"]}', b["measured"], 0.5)
    # "scaled, it stays put at every d_k, a few times the uniform row's 1/64"
    claim.below("scaled variance's largest / smallest", max(scaled) / min(scaled), 1.15, log=True)
    for r in rows:
        if r["rule"].value != "none":
            claim.between(f'scaled variance at {r["d_k"]}, in units of 1/64', 64 * r["measured"], 1.5, 5)
