"""The tuned-comparisons page: every claim, with tolerances from the seeds' spread.

Final losses spread over orders of magnitude and have the odd bad seed, so losses are
compared as geometric means over seeds: "A ends at least twice as high as B" means the mean
of log A exceeds the mean of log B by log 2 plus twice the standard error of the difference.
"""

from __future__ import annotations

import math

import pytest
import torch

from sdpa.attention import Scale
from sdpa.sizes import SIZES, sizes
from sdpa.studies import run_tuning

pytestmark = pytest.mark.claims

TUNING = sizes().tuning
STUDY = sizes().learned_scale
BLOCK_TUNING = sizes().block
CHANCE = math.log(TUNING.sweep("adam", 16, Scale.NONE).n_values)
NONE, SQRT, INV = Scale.NONE, Scale.INV_SQRT, Scale.INV
D_KS = TUNING.d_ks


def se(values: torch.Tensor) -> float:
    return values.std().item() / math.sqrt(len(values))


def clearly_above(high: torch.Tensor, low: torch.Tensor, factor: float = 1.0, sigmas: float = 2) -> bool:
    """``high``'s geometric mean is above ``factor`` times ``low``'s, by ``sigmas`` standard
    errors (two: "clearly"; zero: "on average")."""
    gap = high.log().mean().item() - low.log().mean().item() - math.log(factor)
    return gap > sigmas * math.hypot(se(high.log()), se(low.log()))


@pytest.fixture(scope="module")
def tuned(run_snippet):
    result = run_snippet("tuning/tuned_table.py").namespace["result"]
    # the study's own runs: the same numbers (the transfer page, in a worker of its own
    # under the fast tier, may have handed its copy of the runs to this session first)
    shared = run_tuning(TUNING)
    assert result.keys() == shared.keys() and all(
        result[k].lrs == shared[k].lrs and torch.equal(result[k].sweep_loss, shared[k].sweep_loss)
        and torch.equal(result[k].confirm_loss, shared[k].confirm_loss) for k in shared)
    return result


def test_the_design_is_what_the_page_says(tuned):
    # "five rates on two seeds, the best rerun on five fresh seeds (the full build: seven
    # rates on three seeds, seven fresh seeds)"
    designs = {name: (s.tuning.points, len(s.tuning.sweep_seeds), len(s.tuning.confirm_seeds))
               for name, s in SIZES.items()}
    assert designs == {"quick": (5, 2, 5), "full": (7, 3, 7)}
    assert (TUNING.per_decade, TUNING.last) == (3, 8)
    assert all(s.tuning.steps == TUNING.steps for s in SIZES.values()), "one budget"
    assert dict(TUNING.ablation.optimizers) == {"adam": 0.01, "sgd": 1.0}
    assert not set(TUNING.sweep_seeds) & set(TUNING.confirm_seeds), "confirmation seeds are fresh"
    setup = TUNING.sweep("sgd", 64, Scale.NONE)
    assert (setup.batch, setup.d_model, setup.n_pairs) == (
        TUNING.ablation.batch, TUNING.ablation.d_model, TUNING.ablation.n_pairs)
    assert setup.steps == TUNING.steps == 150 and TUNING.ablation.steps == 200
    assert TUNING.ablation.record_every == 5  # the last 8 records: steps 115 to 150
    for (optimizer, d_k, rule), arm in tuned.items():
        assert TUNING.sweep(optimizer, d_k, rule).lrs == arm.lrs, "experiments hold the rates"
        ratios = [b / a for a, b in zip(arm.lrs, arm.lrs[1:])]
        assert ratios == pytest.approx([10 ** (1 / TUNING.per_decade)] * len(ratios))
        assert arm.sweep_loss.shape == (TUNING.points, len(TUNING.sweep_seeds))
        assert arm.confirm_loss.shape == (len(TUNING.confirm_seeds),)


def test_no_best_rate_sits_at_the_edge_of_its_window(tuned, block):
    for result in (tuned, block):
        edges = [key for key, arm in result.items() if not arm.interior]
        assert not edges, f"best rate at the edge of the sweep: {edges}"


@pytest.mark.parametrize("optimizer", TUNING.optimizers)
def test_tuned_unscaled_rule_still_ends_clearly_higher(tuned, optimizer):
    for d_k in D_KS:
        none = tuned[(optimizer, d_k, NONE)].confirm_loss
        scaled = [tuned[(optimizer, d_k, rule)].confirm_loss for rule in (SQRT, INV)]
        better = min(scaled, key=lambda losses: losses.log().mean())
        assert clearly_above(none, better, factor=1.5), (optimizer, d_k)
        if d_k >= 64:  # "and from d_k = 64 on at least 1.5 times as high as either"
            assert all(clearly_above(none, s, factor=1.5) for s in scaled), (optimizer, d_k)


def test_sgd_unscaled_fails_at_the_fixed_rate_and_learns_when_tuned(tuned):
    for d_k in D_KS:
        arm = tuned[("sgd", d_k, NONE)]
        assert abs(arm.fixed_loss.mean().item() - CHANCE) < 1  # "within a nat of chance"
        assert arm.best_lr <= arm.fixed_lr / 4  # "at least four times lower"
        confirm = arm.confirm_loss
        # learns: more than half a nat below chance (a whole nat failed at d_k = 64, offset 19)
        assert confirm.mean().item() + 2 * se(confirm) < CHANCE - 0.5
        assert clearly_above(arm.fixed_loss, confirm)


def test_adam_scaled_rules_end_within_a_factor_of_two_of_each_other(tuned):
    for d_k in D_KS:
        sqrt = tuned[("adam", d_k, SQRT)].confirm_loss.mean().item()
        inv = tuned[("adam", d_k, INV)].confirm_loss.mean().item()
        assert 1 / 2 < inv / sqrt < 2, d_k


def test_with_sgd_1_over_dk_falls_behind_as_dk_grows(tuned):
    def ratio(d_k):  # 1/d_k's loss over 1/sqrt(d_k)'s
        inv, sqrt = (tuned[("sgd", d_k, rule)].confirm_loss.mean().item() for rule in (INV, SQRT))
        return inv / sqrt

    ratios = [ratio(d_k) for d_k in sorted(D_KS)]
    assert ratios == sorted(ratios) and ratio(16) < 1 < 2 < ratio(256)
    assert clearly_above(tuned[("sgd", 256, INV)].confirm_loss,
                         tuned[("sgd", 256, SQRT)].confirm_loss), "clearly above at 256"
    arm = tuned[("sgd", 256, INV)]
    assert math.isinf(arm.mean_loss[arm.best_index + 1].item()), "next rate up diverges"
    assert clearly_above(arm.fixed_loss, arm.confirm_loss), "tuning helps the slow arm"


def test_adam_fixed_rate_was_near_best_for_scaled_rules_not_for_unscaled_at_256(tuned):
    for d_k in D_KS:
        for rule in (SQRT, INV):
            arm = tuned[("adam", d_k, rule)]
            assert arm.lrs[0] < arm.fixed_lr < arm.lrs[-1]
            assert 1 / 5 <= arm.best_lr / arm.fixed_lr <= 5  # "within a factor of five"
    arm = tuned[("adam", 256, NONE)]
    # "at least twice too high": the best rate is one or two grid steps (2.15x, 4.64x) below
    assert arm.best_lr <= arm.fixed_lr / 2
    for rule in (SQRT, INV):  # "even at its best rate ... three times as high as either"
        assert clearly_above(arm.confirm_loss, tuned[("adam", 256, rule)].confirm_loss, factor=3)


# ---------------------------------------------------------------- a realistic shape


@pytest.fixture(scope="module")
def block(run_snippet):
    namespace = run_snippet("tuning/realistic_shape.py").namespace
    result = run_tuning(BLOCK_TUNING)
    assert namespace["result"]["block"] == list(result.values())
    return result


def test_the_block_has_the_shape_the_page_says():
    (d_k,) = BLOCK_TUNING.d_ks
    experiment = BLOCK_TUNING.sweep("adam", d_k, Scale.NONE)
    assert (BLOCK_TUNING.heads, d_k, experiment.d_model) == (4, 16, 64)
    assert BLOCK_TUNING.optimizers == ("adam",)
    assert (experiment.steps, experiment.batch, experiment.n_pairs) == (
        TUNING.steps, TUNING.ablation.batch, TUNING.ablation.n_pairs)


def test_in_the_block_no_factor_barely_learns_and_1_over_dk_beats_1_over_sqrt(block, tuned):
    (d_k,) = BLOCK_TUNING.d_ks
    none, sqrt, inv = (block[("adam", d_k, rule)] for rule in (NONE, SQRT, INV))
    for scaled in (sqrt, inv):
        assert clearly_above(none.confirm_loss, scaled.confirm_loss, factor=2)
    # "within 0.7 nats of chance": a seed ends 0.43 +- 0.11 below it (24 seeds over seed offsets
    # 0-19), so "half a nat" failed its two-SE margin at 15 offsets of 20
    assert none.confirm_loss.mean().item() - 2 * se(none.confirm_loss) > CHANCE - 0.7
    one_head = tuned[("adam", d_k, NONE)].confirm_loss  # "less than half the block's loss"
    assert clearly_above(none.confirm_loss, one_head, factor=2)
    step = 10 ** (1 / BLOCK_TUNING.per_decade)  # "one grid step below the scaled rule's"
    assert sqrt.best_lr / none.best_lr == pytest.approx(step)
    one = {rule: tuned[("adam", d_k, rule)].best_lr for rule in (NONE, SQRT)}
    assert one[NONE] == pytest.approx(one[SQRT]), "in one head the two were the same"
    assert clearly_above(sqrt.confirm_loss, inv.confirm_loss, factor=1.5)  # below two thirds
    for arm in (none, sqrt, inv):
        assert len(arm.fixed_loss) == len(BLOCK_TUNING.sweep_seeds)


# ---------------------------------------------------------------- a learned temperature


@pytest.fixture(scope="module")
def learned(run_snippet):
    rows = run_snippet("tuning/learned_scale.py").namespace["result"]
    return {(r["optimizer"], r["lr"], r["learned"]): r for r in rows}


def test_the_learned_scale_is_tested_above_the_best_rate(learned):
    for (optimizer, lr, _), r in learned.items():
        assert r["times_best"] >= 2, (optimizer, lr)
        assert len(r["final_loss"]) >= 5


def test_the_learned_scale_falls_and_brakes_the_logits_instead_of_running_away(learned):
    for (optimizer, lr, is_learned), r in learned.items():
        if not is_learned:
            continue
        fixed = learned[(optimizer, lr, False)]
        assert not r["diverged"].any(), "no run with a learned scale diverged"
        assert (r["scale_ratio"] < 1).all(), "the scale fell in every run"
        if optimizer == "adam":
            assert not fixed["diverged"].any()
            # "less than 0.6 of its start": 0.34-0.51 at the lower rate over seeds 2-25
            assert (r["scale_ratio"] < 0.6).all(), "to below 0.6 of its start"
            assert r["max_logit"].median() < fixed["max_logit"].median()
    # Adam: clearly lower at the higher rate, lower on average (geometric mean) at the lower one
    # (the fixed head's geometric mean is 1.25-3.5 times the learned one's over offsets 0-19)
    low, high = dict(STUDY.rates)["adam"]
    assert clearly_above(learned[("adam", high, False)]["final_loss"], learned[("adam", high, True)]["final_loss"])
    assert clearly_above(learned[("adam", low, False)]["final_loss"], learned[("adam", low, True)]["final_loss"],
                         sigmas=0)


def test_sgd_at_the_highest_rate_fixed_fails_and_learned_scatters(learned):
    (low, high) = dict(STUDY.rates)["sgd"]
    assert clearly_above(learned[("sgd", low, False)]["final_loss"],  # "on average": 2.0-4.6 times
                         learned[("sgd", low, True)]["final_loss"], sigmas=0)
    fixed = learned[("sgd", high, False)]
    assert (fixed["diverged"] | (fixed["final_loss"] > CHANCE)).all()  # every fixed run failed
    spread = learned[("sgd", high, True)]["final_loss"]
    assert spread.max() / spread.min() > 3  # "scatter widely"
    # "collapsed to under a fifth of its start" in some: a quarter of the seeds fall below 0.1,
    # and every set of five has one below 0.13 (seed offsets 0-19)
    assert learned[("sgd", high, True)]["scale_ratio"].min() < 0.2


# ---------------------------------------------------------------- head count


def test_splitting_into_more_heads_only_changes_unscaled_and_1_over_dk_rows(run_snippet):
    rows = run_snippet("tuning/head_count.py").namespace["result"]
    at = {(r["heads"], r["rule"]): r for r in rows}
    heads = sorted({r["heads"] for r in rows})
    d_model = run_snippet("tuning/head_count.py").namespace["D_MODEL"]
    for h in heads:  # logit std: sqrt(d_k), 1 and 1/sqrt(d_k), within sampling error
        d_k = d_model // h
        assert at[h, NONE]["logit_std"] == pytest.approx(math.sqrt(d_k), rel=0.05)
        assert at[h, SQRT]["logit_std"] == pytest.approx(1, rel=0.05)
        assert at[h, INV]["logit_std"] == pytest.approx(d_k**-0.5, rel=0.05)
    sqrt = [at[h, SQRT]["effective_keys"] for h in heads]
    assert max(sqrt) / min(sqrt) < 1.1  # the scaled head is the same at every split
    assert all(35 < keys < 45 for keys in sqrt)  # "about 40 of 64 keys in play"
    assert all(at[h, rule]["one_hot"] == 0 for h in heads for rule in (SQRT, INV))
    none = [at[h, NONE]["effective_keys"] for h in heads]
    inv = [at[h, INV]["effective_keys"] for h in heads]
    assert none == sorted(none) and none[0] < 1.1 and none[-1] > 4  # more heads, less peaked
    assert inv == sorted(inv, reverse=True) and inv[0] > 63  # more heads, less flat
    one_hot = [at[h, NONE]["one_hot"] for h in heads]
    assert one_hot == sorted(one_hot, reverse=True) and one_hot[0] > 0.5 and one_hot[-1] < 0.01


# ---------------------------------------------------------------- W_Q and W_K's own rate


@pytest.fixture(scope="module")
def own_rate(run_snippet):
    rows = run_snippet("tuning/own_rate.py").namespace["result"]
    return {(r["shape"], r["optimizer"], r["d_k"]): r for r in rows}


def test_own_rate_runs_on_the_scaled_heads_seeds():
    own = sizes().own_rate
    assert own.confirm_seeds == TUNING.confirm_seeds and own.sweep_seeds == TUNING.sweep_seeds
    assert STUDY.seeds == TUNING.confirm_seeds, "the learned scale runs on fresh seeds too"
    assert not set(TUNING.sweep_seeds) & set(TUNING.confirm_seeds)


def test_own_rate_narrows_the_gap_at_16_but_not_the_start_at_64_and_up(own_rate):
    for optimizer in ("adam", "sgd"):
        small = own_rate[("one head", optimizer, 16)]
        # "at d_k = 16 it narrows the gap": the own rate's excess over 1/sqrt(d_k) is below
        # the one-rate head's, paired on the same five seeds
        assert small["own_minus_scaled"][0] < small["shared_minus_scaled"][0]
        for d_k in (64, 256):
            row = own_rate[("one head", optimizer, d_k)]
            # "still ends above the scaled head": by more than a tenth of a nat on average
            assert row["own_minus_scaled"][0] > 0.1, row
    block = own_rate[("4 heads", "adam", 16)]
    mean, err = block["own_minus_scaled"]
    assert mean > 1.0 and mean > 2 * err, "in the block it still barely learns"


# ---------------------------------------------------------------- speed or capability


@pytest.fixture(scope="module")
def plateau(run_snippet):
    return run_snippet("tuning/plateau.py").namespace


def test_the_plateau_lines_say_what_the_table_shows(plateau):
    result = plateau["result"]
    groups = {(r["shape"], r["optimizer"], r["d_k"]) for r in result["rows"]}
    assert len(plateau["lines"]) == len(groups) == len(plateau["groups"])
    for line, group in zip(plateau["lines"], plateau["groups"]):
        none = next(r for r in result["rows"]
                    if (r["shape"], r["optimizer"], r["d_k"], r["rule"]) == (*group, "none"))
        assert line.startswith(f"{group[0].capitalize()}, ")
        assert ("still falling at the" in line) == none["falling"]
        assert f"{none['reached']} of {none['seeds']} seeds reach" in line
    shapes = {r["shape"] for r in result["rows"]}
    assert shapes == ({"one head", "4 heads"} if sizes().block_plateau else {"one head"})


@pytest.mark.profiles("quick")
def test_at_600_steps_the_unscaled_head_still_ends_higher(plateau):
    rows = {(r["optimizer"], r["rule"]): r for r in plateau["result"]["rows"]}
    for optimizer in ("adam", "sgd"):
        none, scaled = rows[optimizer, "none"], rows[optimizer, "1/√d_k"]
        # whether it is still falling at the end depends on the seeds (not at offsets 12,
        # 13, 15, 16): the lines under the table say which, and are not claimed here
        # whether the unscaled seeds reach 0.1 within 600 steps depends on the rate the
        # 150-step sweep picked (none at offset 0, all five at offset 3): not claimed
        assert scaled["reached"] == scaled["seeds"]
        high, low = torch.tensor(none["final"]), torch.tensor(scaled["final"])
        # higher on average (geometric means over the seeds): by 1.7x to 30x over offsets
        # 0-19, by the rate the 150-step sweep picked; not always by two standard errors
        assert clearly_above(high, low, sigmas=0)


@pytest.mark.profiles("full")
def test_after_3000_steps_the_unscaled_head_still_ends_twice_as_high_everywhere(plateau):
    """The full build's verdict: every d_k, both optimisers and the 4-head block, 3,000
    steps at the rates tuned for 150: without the factor the loss ends at least twice as
    high as 1/sqrt(d_k)'s (geometric means over the seeds), and the scaled head reaches
    0.1 on every seed. At offset 0 the smallest ratio was 3.6 (Adam, d_k = 256)."""
    result, ended = plateau["result"], plateau["ended"]
    groups = {(r["shape"], r["optimizer"], r["d_k"]) for r in result["rows"]}
    assert len(groups) == 7 and set(ended["above"]) == groups, ended["ratios"]
    assert "at least twice as high in loss as 1/√d_k in 7 of 7 settings" in plateau["text"]
    # not claimed: "by two standard errors" (Adam, d_k = 256 missed it at offset 0: one
    # unscaled seed ended at 0.004, one scaled seed at 0.0001)
    for r in result["rows"]:
        if r["rule"] == "1/√d_k":
            assert r["reached"] == r["seeds"], r

