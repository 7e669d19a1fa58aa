"""The practice page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest

import sdpa
from sdpa.attention import Scale
from sdpa.stats import paired

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_reference_equals_pytorch_sdpa_and_default_scale(run_snippet):
    rows = run_snippet("practice/sdpa_equality.py").namespace["result"]
    assert {r["d_k"] for r in rows} == {16, 64, 128}
    for r in rows:
        assert r["max_abs_diff"] < 1e-12, r  # float64 rounding only
        if r["scale_arg"] is None:  # the default call
            assert r["factor"] == pytest.approx(1 / math.sqrt(r["d_k"]))
            assert r["diff_to_unscaled"] > 0.1, "the control: the default is not the unscaled formula"


def test_folded_forward_identical_and_t5_unit_spread(run_snippet, claim):
    rows = {r["head"]: r for r in run_snippet("practice/folded_forward.py").namespace["result"]}
    assert rows["folded"]["max_diff_to_scaled"] == 0.0, "s = 1/8 is a power of two: bit for bit"
    claim.near("scaled head: logit std 1", rows["scaled"]["logit_std"], 1.0, rel=0.05)
    claim.near("T5 head: logit std 1", rows["t5"]["logit_std"], 1.0, rel=0.05)
    claim.above("T5's weights are a different draw", rows["t5"]["max_diff_to_scaled"], 1.0)
    claim.near("unscaled head: logit std 8", rows["unscaled"]["logit_std"], 8.0, rel=0.05)


def test_folding_needs_the_optimiser_specific_learning_rate(run_snippet, claim):
    run = run_snippet("practice/folded_training.py")
    result = run.namespace["result"]
    assert "Adam, retraces the reference bit for bit; SGD, retraces the reference bit for bit" in run.output
    assert list(result) == ["adam", "sgd"], "the rules in one order on the page: Adam, then SGD"
    for optimizer, r in result.items():
        arms = [r[name] for name in ("reference", "naive", "rule", "other")]
        assert all(arm["init_difference"] == 0.0 for arm in arms), "identical at step 0"
        assert r["reference"]["max_difference"] == 0.0
        # the identity, bit for bit: the rule's arm trained alone (Adam: epsilon / s too)
        assert r["retraces"], f"{optimizer}: the folded head with the rule's rate retraces the reference"
        claim.above(f"{optimizer}: unchanged rates change the run", r["naive"]["max_difference"], 1.0, log=True)
        # "more than a tenth of a nat" (Adam at "more than 0.3 nats": 3.2-3.9 over four sweeps of
        # independent blocks, 3.5 over 52 of them pooled)
        claim.above(f"{optimizer}: the other optimiser's rule changes it", r["other"]["max_difference"], 0.1, log=True)
        claim.above(f"{optimizer}: the reference learns", r["reference"]["final_accuracy"], 0.9)
        naive_end = abs(r["naive"]["final_loss"] - r["reference"]["final_loss"])
        claim.above(f"{optimizer}: the naive fold ends far away", naive_end, 0.5, log=True)
    assert result["sgd"]["rule"]["max_difference"] == 0.0, "SGD with lr * s^2 retraces it exactly, even together"


def test_multihead_scaled_heads_are_comparable(run_snippet, claim):
    rows = run_snippet("practice/multihead_scales.py").namespace["result"]
    for r in rows:
        claim.near(f'unscaled std sqrt(d_k) at {r["d_k"]}', r["std_none"], math.sqrt(r["d_k"]), rel=0.05)
        claim.near(f'scaled std 1 at {r["d_k"]}', r["std_scaled"], 1.0, rel=0.05)
    scaled = [r["max_weight_scaled"] for r in rows]
    unscaled = [r["max_weight_none"] for r in rows]
    claim.below("scaled heads start equally soft: largest weight's range", max(scaled) - min(scaled), 0.02)
    for a, b in zip(rows, rows[1:]):
        claim.above(f'unscaled largest weight rises, {a["d_k"]} to {b["d_k"]}', b["max_weight_none"],
                    a["max_weight_none"])
    claim.above("unscaled largest weight at the widest head", unscaled[-1], 0.85)
    claim.above("unscaled largest weight's rise", unscaled[-1] - unscaled[0], 0.2)


def test_production_table(run_snippet, claim):
    rows = {r["model"]: r for r in run_snippet("practice/production_heads.py").namespace["result"]}
    assert not any("Mistral" in name for name in rows), "unsourced: left out"
    for name, r in rows.items():
        if not r["head_dim_given"]:
            assert r["head_dim"] * r["heads"] == r["d_model"]
        claim.near(f"{name}: logit std", r["logit_std"], 1.0 if r["folded"] else r["scale_times_sqrt_d"], rel=0.03)
    wide = [r for r in rows.values() if r["head_dim"] == 128]
    assert 2 * len(wide) > len(rows), "most production models in the table use head dimension 128"
    assert 2 * sum(r["scale"] == pytest.approx(128**-0.5) for r in wide) > len(wide), (
        "most of those multiply the logits by 1/sqrt(128)")
    assert rows["Gemma 2 27B"]["scale"] == pytest.approx(144**-0.5)
    assert rows["Gemma 3 27B"]["scale"] == pytest.approx(168**-0.5)
    assert rows["Grok-1"]["scale"] == pytest.approx(0.08838834764831845)
    assert rows["T5 base"]["scale"] == 1.0
    assert rows["GPT-Neo 1.3B"]["scale"] == 1.0 and rows["GPT-Neo 1.3B"]["folded"]
    assert (rows["GPT-Neo 1.3B"]["head_dim"], rows["GPT-Neo 1.3B"]["heads"]) == (128, 16)


def test_layernorm_does_not_remove_the_growth(run_snippet, claim):
    rows = run_snippet("practice/layernorm.py").namespace["result"]
    for r in rows:
        component = 1.0 if r["qk_layernorm"] else 1 / 3
        at = f'{"LayerNorm" if r["qk_layernorm"] else "plain"} at {r["d_k"]}'
        claim.near(f"{at}: component variance", r["q_component_var"], component, rel=0.05)
        claim.near(f"{at}: unscaled std", r["std_unscaled"], math.sqrt(r["d_k"] * component**2), rel=0.1)
        claim.near(f"{at}: scaled std", r["std_scaled"], component, rel=0.1)
    for normed in (False, True):
        unscaled = [r["std_unscaled"] for r in rows if r["qk_layernorm"] is normed]
        claim.near(f'{"LayerNorm" if normed else "plain"}: unscaled std grows like sqrt(d_k), 16 -> 256',
                   unscaled[-1] / unscaled[0], 4.0, rel=0.1)


def test_low_precision_rounding_and_overflow(run_snippet, claim):
    rows = run_snippet("practice/low_precision.py").namespace["result"]
    at = {(r["dtype"], r["d_k"], r["logits"]): r for r in rows}
    for dtype in ("bfloat16", "float16"):
        for d_k in (64, 128, 512):
            unscaled, scaled = at[(dtype, d_k, "q·k")], at[(dtype, d_k, "q·k/√d_k")]
            where = f"{dtype} at {d_k}"
            # absolute errors scale with the logits' size; within half a rounding step (+ accumulation)
            claim.above(f"{where}: logit error, unscaled / scaled",
                        unscaled["logit_error"] / scaled["logit_error"], 3, log=True)
            claim.above(f"{where}: weight error, unscaled / scaled",
                        unscaled["weight_error"] / scaled["weight_error"], 3, log=True)
            # a bound of the arithmetic, not an estimate: the error of rounding the largest logit
            # (and the matmul's accumulation) stays within one spacing there
            assert unscaled["logit_error"] <= unscaled["spacing_at_max"] * 1.01, where
            assert scaled["exp_overflow_share"] == 0.0
    assert at[("bfloat16", 128, "q·k")]["exp_overflow_share"] == 0.0
    claim.above("float16 at 128: share of rows whose exp overflows", at[("float16", 128, "q·k")]["exp_overflow_share"],
                0.1)
    assert at[("float16", 64, "q·k")]["exp_limit"] == pytest.approx(math.log(65504))


def test_fp16_scaling_q_first_avoids_overflow(run_snippet, claim):
    rows = {r["std"]: r for r in run_snippet("practice/fp16_overflow.py").namespace["result"]}
    for r in rows.values():
        assert r["inf_scaled_after"] == r["inf_unscaled"], "dividing afterwards cannot undo inf"
        assert r["inf_scaled_before"] <= r["inf_unscaled"]
    assert rows[4]["inf_unscaled"] == 0.0
    claim.above("std 64: share of infinite unscaled logits", rows[64]["inf_unscaled"], 0.05)
    assert rows[64]["inf_scaled_before"] == 0.0


def test_sharp_heads_carry_more_of_the_layer_after_w_o(run_snippet, claim):
    result = run_snippet("practice/head_share.py").namespace["result"]
    mixed, equal, dims = result["mixed"], result["equal"], result["dims"]
    none, scaled = mixed[Scale.NONE], mixed[Scale.INV_SQRT]
    for rule, m in mixed.items():  # independent values: the heads' variances add up to y's
        claim.near(f"{rule.value}: heads' variances add up to y's", m["sum_of_parts"], m["total"], rel=0.05)
    # "a sharp head puts more than ten times a soft one's variance into y" (d_k = 128)
    claim.above("sharp over soft head's variance after W_O, d_k = 128", result["sharp_over_soft"], 10, log=True)
    for i in range(0, len(dims) - 2, 2):  # unscaled, the wider head takes the larger share (d_k x 4)
        claim.above(f"unscaled share rises from {dims[i]} to {dims[i + 2]}", none["share"][i + 2], none["share"][i])
    claim.above("unscaled: widest head's share over the narrowest's",
                result["widest_over_narrowest"][Scale.NONE], 2, log=True)
    for d, share in zip(dims, scaled["share"]):  # scaled: every head near a fifth
        claim.between(f"scaled share at {d}, about a fifth", share, 0.15, 0.25)
    for rule, e in equal.items():  # equal widths: a token's largest head carries about a fifth either way
        claim.near(f"{rule.value}: equal widths, a token's largest head's share", e["largest_share"], 0.2, tol=0.04)


@pytest.mark.profiles("full")
def test_the_head_count_lines_read_the_table(run_snippet):
    """Kind (b): the lines under the table are printed from its data, with their intervals.
    ("Both ends of the grid end higher at every head count" was a claim: over offsets 0-2 of
    the full profile its two-head margin was 2.2 standard deviations, so the snippet prints
    the intervals instead; "the best rate moves with the head count", an argmax of four
    5-seed means, now reads the rate best for one head against each head count's own best,
    paired by seed, in the words its interval decides.)"""
    run = run_snippet("practice/head_count_training.py")
    result, lrs = run.namespace["result"], run.namespace["result"]["lrs"]
    picks = [result["best"][heads, Scale.INV_SQRT] for heads in result["heads"]]
    inside = all(0 < lrs.index(lr) < len(lrs) - 1 for lr in picks)
    assert ("lies inside the grid at every head count" in run.output) == inside
    assert "moves with the head count" not in run.output
    for rule in (Scale.NONE, Scale.INV_SQRT):
        one = result["best"][result["heads"][0], rule]
        for heads in result["heads"][1:]:
            loss, best = result["losses"][heads][rule], result["best"][heads, rule]
            said = ("it is the best rate" if best == one else
                    "it " + paired(loss[lrs.index(one)].tolist(), loss[lrs.index(best)].tolist(),
                                   log=True).compared())
            assert f"| {said} |" in run.output
    for heads in result["heads"]:
        loss = result["losses"][heads][Scale.INV_SQRT]  # (rates, seeds)
        best = lrs.index(result["best"][heads, Scale.INV_SQRT])
        for end in (0, len(lrs) - 1):
            interval = paired(loss[end].tolist(), loss[best].tolist())
            assert f"[{sdpa.fmt(interval.low)}, {sdpa.fmt(interval.high)}]" in run.output
