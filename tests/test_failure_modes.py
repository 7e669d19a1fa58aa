"""The failure-modes page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math
import statistics

import pytest
import torch

from sdpa import runtime, survey
from sdpa.attention import Scale, jacobian
from sdpa.recall import Arm
from sdpa.sizes import sizes
from sdpa.ablation import run_ablation

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims

ABLATION = sizes().ablation
CHANCE, UNIFORM = math.log(32), math.log(ABLATION.n_pairs)
NONE, SQRT, INV = Scale.NONE, Scale.INV_SQRT, Scale.INV
#: "no row is one-hot": a share under half a row of the survey's
NO_ROW = 0.5 / survey.N_ROWS


mean, median = statistics.mean, statistics.median


def between_log(claim, name, statistic, low, high):
    """``low`` < ``statistic`` < ``high`` for a ratio: the two edges on the log scale."""
    claim.above(f"{name} (low)", statistic, low, log=True)
    claim.below(f"{name} (high)", statistic, high, log=True)


# ---------------------------------------------------------------- saturation


def _one_hot_se(d_k, rule, init):
    rows = survey.rows(d_k, survey.factor(rule, d_k, init))
    return survey.standard_error((rows.max_weight > survey.ONE_HOT).double())


def test_unscaled_rows_saturate_as_dk_grows_and_scaled_rows_do_not(run_snippet, claim):
    namespace = run_snippet("failure-modes/saturation.py").namespace
    at = {(r["d_k"], r["rule"], r["init"]): r for r in namespace["result"]}
    dims = namespace["HEAD_DIMS"]
    assert dims == [8, 16, 32, 64, 128, 256, 512]
    for init in ("unit", "default"):
        none = [at[d, NONE, init] for d in dims]
        for d, a, b in zip(dims[1:], none, none[1:]):  # every number moves towards one-hot
            claim.above(f"{init}: largest weight rises at {d}", b["max_weight"], a["max_weight"])
            claim.below(f"{init}: entropy falls at {d}", b["entropy"], a["entropy"])
            claim.below(f"{init}: keys in play fall at {d}", b["effective_keys"], a["effective_keys"])
            # the one-hot share never falls (no fewer one-hot rows: within half a row); with the
            # default init "from d_k = 64 on" (below, a row or two at most: 0-0.2% at 64)
            if init == "unit" or a["d_k"] >= 64:
                claim.above(f"{init}: one-hot share does not fall at {d}", b["one_hot"], a["one_hot"] - NO_ROW)
    # Unit variance: fewer than two keys in play from d_k = 64 on; one-hot rows "under a quarter
    # at 64, under two fifths at 128 and over two fifths at 256". (A fifth, a third and a half
    # within four standard errors, and more than half at 512 by four, had margins of 1.7-2.7 SD
    # over seed offsets 0-19: the SD over offsets is 1.3-1.8 times the SE over key sets, and the
    # share at 256 is 47% +- 1.7%, not 50%.)
    for d in dims:
        if d >= 64:
            claim.below(f"unit: keys in play under two at {d}", at[d, NONE, "unit"]["effective_keys"], 2)
    one_hot = {d: at[d, NONE, "unit"]["one_hot"] for d in dims}
    claim.below("unit: one-hot share under a quarter at 64", one_hot[64], 1 / 4)
    claim.below("unit: one-hot share under two fifths at 128", one_hot[128], 2 / 5)
    claim.above("unit: one-hot share over two fifths at 256", one_hot[256], 2 / 5)
    # Default init at 128: under three rows in a hundred one-hot (0.7%-2.2% over seed offsets
    # 0-19), a handful of keys in play.
    default = at[128, NONE, "default"]
    claim.below("default: one-hot share at 128", default["one_hot"], 0.03)
    claim.between("default: keys in play at 128, a handful", default["effective_keys"], 3, 8)
    # Scaled: no number moves by 15% across d_k, about 40 of 64 keys in play, no one-hot row, not
    # uniform. ("Within 10%": the mean largest weight's max/min over d_k reached 1.095, margin 2.4.)
    scaled = {d: at[d, SQRT, "unit"] for d in dims}
    for key in ("max_weight", "entropy", "effective_keys", "key_weight"):
        values = [r[key] for r in scaled.values()]
        claim.below(f"scaled: {key}, largest over smallest across d_k", max(values) / min(values), 1.15, log=True)
    for d, r in scaled.items():
        claim.between(f"scaled: keys in play about 40 at {d}", r["effective_keys"], 35, 45)
        claim.below(f"scaled: no one-hot row at {d}", r["one_hot"], NO_ROW)
        claim.below(f"scaled: entropy below uniform at {d}", r["entropy"], math.log(64) - 0.2)
    # 1/d_k drifts towards the uniform row.
    by_d = [at[d, INV, "unit"]["effective_keys"] for d in dims]
    for d, a, b in zip(dims[1:], by_d, by_d[1:]):
        claim.above(f"1/d_k: keys in play rise at {d}", b, a)
    claim.above("1/d_k: keys in play at 512, nearly uniform", by_d[-1], 63)


def test_a_typical_key_gets_almost_no_weight_without_the_divisor(run_snippet, claim):
    at = {(r["d_k"], r["rule"], r["init"]): r
          for r in run_snippet("failure-modes/saturation.py").namespace["result"]}
    # "under 1e-6 of the uniform weight at d_k = 64 and under 1e-9 at 128" (the words were
    # "about 1e-7", for 5.2e-7, which is nearer 1e-6 on the log scale)
    claim.below("unscaled typical key's weight x n at 64, under 1e-6", at[64, NONE, "unit"]["key_weight"], 1e-6,
                log=True)
    claim.below("unscaled typical key's weight x n at 128, under 1e-9", at[128, NONE, "unit"]["key_weight"], 1e-9,
                log=True)
    for (d, rule, _), r in at.items():
        if rule == SQRT:
            claim.above(f"scaled typical key's weight x n over half at {d}", r["key_weight"], 0.5)
    # The logit gradient of a key is proportional to its weight: p_j (g_j - p.g).
    g = runtime.generator(0)
    z, upstream = torch.randn(7, dtype=torch.float64, generator=g), torch.randn(7, generator=g)
    p = torch.softmax(z, -1)
    expected = p * (upstream.double() - (p * upstream.double()).sum())
    assert torch.allclose(jacobian(p) @ upstream.double(), expected, atol=1e-12)


# ---------------------------------------------------------------- Jacobian


def test_jacobian_curve_small_at_both_ends_and_where_rows_sit(run_snippet, claim):
    result = run_snippet("failure-modes/jacobian.py").namespace["result"]
    curve = result["curve"]
    marked = {(r["d_k"], r["rule"], r["init"]): r for r in result["marked"]}
    norms = [r["spectral_norm"] for r in curve]
    peak = max(norms)
    assert peak <= 0.5  # the bound: a variance of a unit vector under p
    claim.near("flat row: spectral norm 1/n", norms[0], 1 / 64, rel=0.05)
    claim.below("one-hot end: spectral norm under half the peak", norms[-1], 0.5 * peak)
    claim.near("flat row: trace 1 - 1/n", curve[0]["trace"], 1 - 1 / 64, rel=0.01)
    for a, b in zip(curve, curve[1:]):  # the trace falls steadily
        claim.below(f"trace falls at logit std {b['std']:.3g}", b["trace"], a["trace"] + 1e-9)
    scaled = marked[128, SQRT, "unit"]
    for (d, rule, init), r in marked.items():
        if rule is NONE:
            # the surprise in the prose: a larger spectral norm, a smaller trace
            claim.above(f"unscaled {init} at {d}: spectral norm above scaled", r["spectral_norm"],
                        scaled["spectral_norm"])
            claim.below(f"unscaled {init} at {d}: trace below scaled", r["trace"], scaled["trace"])
            if init == "unit":  # "most of it with unit initialisation"
                claim.below(f"unscaled unit at {d}: trace under half of scaled", r["trace"] / scaled["trace"], 0.5,
                            log=True)
    claim.below("curve's one-hot end below the unscaled row's spectral norm", norms[-1],
                marked[128, NONE, "unit"]["spectral_norm"])


def test_row_length_decides_which_row_has_the_larger_spectral_norm(run_snippet, claim):
    namespace = run_snippet("failure-modes/row_length.py").namespace
    at = {(r["d_k"], r["n"], r["rule"]): r for r in namespace["result"]}
    lengths = namespace["ROW_LENGTHS"]
    assert lengths == [8, 16, 32, 64, 128]
    for d in (64, 128):
        norm = {(n, rule): at[d, n, rule]["spectral_norm"] for n in lengths for rule in (NONE, SQRT)}
        se = {(n, rule): at[d, n, rule]["spectral_norm_se"] for n in lengths for rule in (NONE, SQRT)}
        # 64 keys: the unscaled row's is larger, at both d_k; 16 keys: the scaled row's, at d_k = 128
        # (by 4 standard errors; at d_k = 64 it is larger at every offset 0-19, but not by 4 SE
        # with a margin of 3)
        if d == 128:
            claim.above(f"d_k {d}, 16 keys: scaled minus unscaled norm", norm[16, SQRT] - norm[16, NONE],
                        4 * math.hypot(se[16, SQRT], se[16, NONE]))
        claim.above(f"d_k {d}, 64 keys: unscaled minus scaled norm", norm[64, NONE] - norm[64, SQRT],
                    4 * math.hypot(se[64, SQRT], se[64, NONE]))
        # the scaled row spreads over more keys and its norm falls steadily; the unscaled one's
        # rises from 8 keys to 64 and more (by 0.03-0.08 over seed offsets 0-19)
        for n, m in zip(lengths, lengths[1:]):
            claim.below(f"d_k {d}: scaled norm falls from {n} to {m} keys", norm[m, SQRT], norm[n, SQRT])
        for n in (64, 128):
            claim.above(f"d_k {d}: unscaled norm at {n} keys above 8 keys'", norm[n, NONE], norm[8, NONE])
        # "about 11 keys of 16, 41 of 64" (10.8-11.2 and 40.5-41.3 over offsets 0-19)
        claim.between(f"d_k {d}: scaled keys in play of 16", at[d, 16, SQRT]["effective_keys"], 10, 12)
        claim.between(f"d_k {d}: scaled keys in play of 64", at[d, 64, SQRT]["effective_keys"], 39, 43)
        for n in lengths:
            claim.below(f"d_k {d}: no scaled row of {n} keys one-hot", at[d, n, SQRT]["one_hot"], NO_ROW)
    # "Shorter rows are one-hot more often": the snippet prints both shares at d_k = 128
    claim.above("d_k 128: rows of 16 one-hot more often than rows of 64", at[128, 16, NONE]["one_hot"],
                at[128, 64, NONE]["one_hot"])
    assert f"{at[128, 16, NONE]['one_hot']:.0%} of unscaled rows of 16 keys" in run_snippet(
        "failure-modes/row_length.py").output


# ---------------------------------------------------------------- gradients at init


def test_query_gradients_are_not_smaller_without_the_divisor(run_snippet, claim):
    rows = run_snippet("failure-modes/init_gradients.py").namespace["result"]
    at = {(r.arm.init, r.d_k, r.arm.scale): r for r in rows}
    dims = [16, 64, 128, 256]
    unit_none = [at[("unit", d, NONE)].ratio_q_v for d in dims]
    for d, r in zip(dims, unit_none):  # larger than W_V's, not smaller
        claim.above(f"unit, unscaled: W_Q over W_V above 1 at {d}", r, 1, log=True)
    # and growing with d_k: "at 256 more than 1.5 times its value at 16" (seed offsets 0-19:
    # 1.7-2.2 times; from 128 to 256 it can dip, so the page claims no step-by-step rise)
    claim.above("unit, unscaled: ratio at 256 over ratio at 16", unit_none[-1] / unit_none[0], 1.5, log=True)
    # W_K's too, as the page says of "W_Q's and W_K's gradients" (the ratio of the seeds' means)
    ratios = {"W_Q": lambda r: r.ratio_q_v, "W_K": lambda r: r.grad_k / r.grad_v}
    for d in dims:
        claim.above(f"unit, unscaled: W_K over W_V above 1 at {d}", ratios["W_K"](at[("unit", d, NONE)]), 1, log=True)
        for name, ratio in ratios.items():
            between_log(claim, f"unit, scaled: {name} over W_V a bit smaller at {d}", ratio(at[("unit", d, SQRT)]),
                        0.5, 1)
            between_log(claim, f"default, scaled: {name} over W_V about a third at {d}",
                        ratio(at[("default", d, SQRT)]), 0.25, 0.4)
            for init in ("unit", "default"):  # nowhere orders of magnitude below
                claim.above(f"{init}, unscaled: {name} over W_V above a tenth at {d}", ratio(at[(init, d, NONE)]),
                            0.1, log=True)
    # the top tenth's share of the squared gradient grows from d_k = 16 to 128 (from 128 to 256
    # it can stall: margin 2.4), and "from d_k = 64 on it is most of the total" (at 16, 54-62%
    # over offsets 0-7 on three seeds: a margin of 2.7 above a half, so the page no longer says
    # it there; the snippet now averages six seeds)
    shares = [at[("unit", d, NONE)].top_decile_share for d in dims]
    for d, s in zip(dims, shares):
        if d >= 64:
            claim.above(f"unit, unscaled: top decile carries most at {d}", s, 0.5)
    for d, a, b in zip(dims[1:3], shares, shares[1:3]):
        claim.above(f"unit, unscaled: top decile share grows at {d}", b, a)
    for d in dims:  # "between a quarter and a half" (six seeds: three gave margins of 3.0-3.5)
        for init in ("unit", "default"):
            claim.between(f"{init}, scaled: top decile share at {d}", at[(init, d, SQRT)].top_decile_share, 0.25, 0.5)


# ---------------------------------------------------------------- training
#
# Every training sentence of the page (includes/verdicts/failure-modes.md: ablation, inverse-dk,
# symptoms; the ablation's list) is checked here, in both profiles: the quick build's three
# seeds and the full build's five. So no claim reads a statistic whose meaning moves with the
# number of seeds in a way that helps it: "every seed" gets harder with more seeds, a mean
# does not move, a t interval narrows. "Learns" and "stalls" are the page's words: every seed
# ends below, or above, half of the chance loss. Thresholds are the page's round numbers,
# fixed before any sweep; where a sweep of seeds 0-23 (offsets 0-19 at three and five seeds)
# put a sentence under a margin of 3, its words were narrowed (the notes say which).


def _table(run_snippet):
    rows = run_snippet("failure-modes/ablation_table.py").namespace["result"]
    return {(r.optimizer, r.d_k, r.arm.init, r.arm.scale): r for r in rows}


def test_sgd_without_divisor_stalls_and_collapses(run_snippet, claim):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("sgd", d, init, NONE)]
            # "stalls: its median seed ends above half of the chance loss"
            claim.above(f"{init}, d_k {d}: median unscaled seed above half of chance", median(r.final_loss),
                        CHANCE / 2)
            # "with its attention on a single key" (highest seed's end entropy under 0.02)
            claim.below(f"{init}, d_k {d}: unscaled end entropy, a single key", max(r.entropy_end), 0.05)
    # "The 1/sqrt(d_k) head, trained the same way, learns at every d_k": its median seed ends
    # below half of chance (at d_k = 16, the closest, the seeds end at 0.8-1.5 against 1.73)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            claim.below(f"{init}, d_k {d}: median 1/sqrt(d_k) seed below half of chance",
                        median(at[("sgd", d, init, SQRT)].final_loss), CHANCE / 2)
    runs = run_snippet("failure-modes/entropy_curves.py").namespace["result"]
    memo = run_ablation(ABLATION)  # the figures read the one stored run of each experiment
    assert runs.keys() == memo.keys() and all(torch.equal(runs[k].metrics.loss, memo[k].metrics.loss) for k in runs)
    for d in (16, 64, 256):
        history = runs[("sgd", d)]
        for init in ("unit", "default"):
            # "on average it misses more than a third of the queries" (the mean over seeds: "every
            # seed misses" had a margin of 2.9 at five seeds, default init, d_k = 64)
            claim.below(f"{init}, d_k {d}: unscaled mean final accuracy",
                        history.arm(Arm(NONE, init=init)).final().accuracy.mean().item(), 2 / 3)
        # "with unit initialisation, every seed has under two keys in play by step 25" (with the
        # default init not at d_k = 16, so the page says unit)
        early = history.step <= 25
        claim.below(f"unit, d_k {d}: unscaled entropy at step 25, highest seed",
                    history.arm(Arm(NONE, init="unit")).entropy[early][-1].max().item(), math.log(2))


def test_adam_without_divisor_is_slower(run_snippet, claim):
    at = _table(run_snippet)
    for d in (16, 64):  # "learns at d_k = 16 and 64": its median seed below half of chance
        for init in ("unit", "default"):  # (every seed: 1.2 SD over ten blocks; one stalled at 64)
            claim.below(f"{init}, d_k {d}: median unscaled seed below half of chance",
                        median(at[("adam", d, init, NONE)].final_loss), CHANCE / 2)
    # "its mean final loss stays above the 1/sqrt(d_k) head's at d_k = 64 and 256": the ratio of the
    # two means, on the log scale (1.4-28 over offsets; margin 3.5 at three seeds, default init,
    # d_k = 16). The paired t interval on three seeds does not carry it (t = 4.3 on 2 degrees of
    # freedom): the page says "mean", not "every seed" or "significantly".
    for d in (64, 256):  # (at 16, default init: a margin of 3.0 over sixteen blocks)
        for init in ("unit", "default"):
            none, sqrt = at[("adam", d, init, NONE)], at[("adam", d, init, SQRT)]
            claim.above(f"{init}, d_k {d}: unscaled over 1/sqrt(d_k) mean final loss",
                        mean(none.final_loss) / mean(sqrt.final_loss), 1, log=True)
    for init in ("unit", "default"):
        # "At d_k = 256 its mean final loss is still above 0.5" (above 0.75, on three seeds: a
        # margin of 2.6 over ten independent blocks), the loss the scaled arms all got below
        claim.above(f"{init}, d_k 256: unscaled mean final loss", mean(at[("adam", 256, init, NONE)].final_loss), 0.5)
        for scaling in (SQRT, INV):  # "Every seed of both scaled arms got below 0.5 within the budget"
            claim.below(f"{init}, d_k 256, {scaling.value}: slowest seed's steps to 0.5",
                        max(at[("adam", 256, init, scaling)].steps_to_threshold), ABLATION.steps + 0.5)


def test_inverse_dk_trains_with_adam_and_is_slow_with_sgd_at_256(run_snippet, claim):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("adam", d, init, INV)]  # "under Adam its median seed ends below a loss of 0.25"
            claim.below(f"Adam, {init}, d_k {d}: 1/d_k median final loss", median(r.final_loss), 0.25)
    for d in (16, 64, 256):  # "With SGD it learns at every d_k: its median seed ends below half
        for init in ("unit", "default"):  # of the chance loss" (the closest, default at 256: 1.2)
            claim.below(f"SGD, {init}, d_k {d}: 1/d_k median final loss below half of chance",
                        median(at[("sgd", d, init, INV)].final_loss), CHANCE / 2)
    for init in ("unit", "default"):
        r = at[("sgd", 256, init, INV)]
        # "its mean final loss stays above the 1/sqrt(d_k) head's" (single seeds overlap)
        claim.above(f"SGD, {init}, d_k 256: 1/d_k mean final loss above 1/sqrt(d_k)'s", mean(r.final_loss),
                    mean(at[("sgd", 256, init, SQRT)].final_loss))
        # "its rows start almost uniform", "near the flat end" (at initialisation)
        claim.above(f"SGD, {init}, d_k 256: 1/d_k lowest start entropy, almost uniform", min(r.entropy_start),
                    0.99 * UNIFORM)
        claim.below(f"SGD, {init}, d_k 256: 1/d_k highest W_Q over W_V at step 0", max(r.ratio_q_v), 0.1, log=True)


def test_scaled_heads_still_become_sharp(run_snippet, claim):
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            for init in ("unit", "default"):
                r = at[(opt, d, init, SQRT)]
                # "start within a third of the uniform entropy" (E[H] = 0.83 ln 8 at unit logit variance)
                claim.above(f"{opt}, {init}, d_k {d}: 1/sqrt(d_k) lowest start entropy", min(r.entropy_start),
                            2 / 3 * UNIFORM)
                # "their mean entropy ends below a quarter of where it started"
                claim.below(f"{opt}, {init}, d_k {d}: 1/sqrt(d_k) end over start entropy",
                            mean(r.entropy_end) / mean(r.entropy_start), 0.25, log=True)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            # inverse-dk: "the attention sharpens to under half of its starting entropy, though
            # less than the other rules' within 200 steps" (means over seeds)
            ends = {s: mean(at[("adam", d, init, s)].entropy_end) for s in Scale}
            claim.above(f"Adam, {init}, d_k {d}: 1/d_k the highest end entropy", ends[INV],
                        max(v for s, v in ends.items() if s is not INV))
            claim.below(f"Adam, {init}, d_k {d}: 1/d_k end over start entropy",
                        ends[INV] / mean(at[("adam", d, init, INV)].entropy_start), 0.5, log=True)
    for init in ("unit", "default"):  # "With SGD at d_k = 256, the 1/d_k heads stay above half of uniform"
        claim.above(f"SGD, {init}, d_k 256: 1/d_k lowest end entropy, above half of uniform",
                    min(at[("sgd", 256, init, INV)].entropy_end), UNIFORM / 2)


def test_default_init_starts_less_peaked(run_snippet, claim):
    """"starts the unscaled rows less peaked on average" (at initialisation): the means over seeds
    the table shows (every default seed above every unit seed had a margin of 2.8 at d_k = 256)."""
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            default, unit = at[(opt, d, "default", NONE)], at[(opt, d, "unit", NONE)]
            claim.above(f"{opt}, d_k {d}: default's mean start entropy above unit's", mean(default.entropy_start),
                        mean(unit.entropy_start))


def test_symptom_verdicts(run_snippet, claim):
    result = run_snippet("failure-modes/symptoms.py").namespace["result"]
    v = result["verdicts"]
    rows = result["rows"]
    # "At a learning rate of 1, plain SGD without the divisor does stall, as claimed": the
    # verdict the snippet prints, and the statistic that decides it
    assert v[("plateau", "sgd")] == "reproduced"
    claim.above("SGD: lowest unscaled seed above half of chance, every run",
                min(min(r["final_loss"]) for r in rows if r["optimizer"] == "sgd"), CHANCE / 2)
    # The gradient symptom is not reproduced over the first steps ("not orders of magnitude
    # smaller ... nor under Adam"): verdicts: symptoms, "Under Adam, in every run and seed, the
    # median ratio of W_Q's gradient to W_V's over the first 50 steps stays above a tenth"
    assert v[("gradients", "all")] != "reproduced"
    adam = [r for r in rows if r["optimizer"] == "adam"]
    for r in adam:
        claim.above(f"Adam, {r['init']}, d_k {r['d_k']}: worst seed's median ratio, steps 0-50",
                    r["ratio_median"], 0.1, log=True)
    # The page no longer says "and above a twentieth after them" (a margin of 2.7 at three seeds):
    # the table prints the lowest seed's ratio after step 50 instead.
    # Once stalled (SGD), "at most in part" by the snippet's rule, and "after step 50, the median
    # seed's ratio is not below a hundredth in every run". ("Partly" itself, under a tenth in the
    # median seed of one run, had a margin of 1.9, so the verdict may read "not reproduced".)
    assert v[("gradients", "stalled")] in ("partly", "not reproduced")
    stalled = {(r["init"], r["d_k"]): r["ratio_late"] for r in rows if r["optimizer"] == "sgd"}
    claim.above("SGD: some run's median seed above a hundredth after step 50",
                max(statistics.median(s) for s in stalled.values()), 0.01, log=True)
