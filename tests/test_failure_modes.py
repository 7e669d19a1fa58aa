"""The failure-modes page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

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


def mean(values):
    return sum(values) / len(values)


# ---------------------------------------------------------------- saturation


def _one_hot_se(d_k, rule, init):
    rows = survey.rows(d_k, survey.factor(rule, d_k, init))
    return survey.standard_error((rows.max_weight > survey.ONE_HOT).double())


def test_unscaled_rows_saturate_as_dk_grows_and_scaled_rows_do_not(run_snippet):
    namespace = run_snippet("failure-modes/saturation.py").namespace
    at = {(r["d_k"], r["rule"], r["init"]): r for r in namespace["result"]}
    dims = namespace["HEAD_DIMS"]
    assert dims == [8, 16, 32, 64, 128, 256, 512]
    for init in ("unit", "default"):
        none = [at[d, NONE, init] for d in dims]
        for a, b in zip(none, none[1:]):  # every number moves towards one-hot
            assert b["max_weight"] > a["max_weight"] and b["entropy"] < a["entropy"]
            assert b["effective_keys"] < a["effective_keys"] and b["one_hot"] >= a["one_hot"]
    # Unit variance: fewer than two keys in play from d_k = 64 on; one-hot rows a fifth at 64,
    # a third at 128, just under half at 256, more than half at 512.
    assert all(at[d, NONE, "unit"]["effective_keys"] < 2 for d in dims if d >= 64)
    one_hot = {d: (at[d, NONE, "unit"]["one_hot"], _one_hot_se(d, NONE, "unit")) for d in dims}
    for d, said in ((64, 1 / 5), (128, 1 / 3)):  # within four standard errors
        value, se = one_hot[d]
        assert abs(value - said) < 4 * se, (d, value, se)
    value, se = one_hot[256]  # "just under half"
    assert 0.4 < value < 0.5 + 4 * se
    assert one_hot[512][0] - 4 * one_hot[512][1] > 0.5
    # Default init at 128: one or two rows in a hundred one-hot (0.7%-2.2% over seed offsets
    # 0-19), a handful of keys in play.
    default = at[128, NONE, "default"]
    assert 0.005 < default["one_hot"] < 0.025
    assert abs(default["one_hot"] - 0.015) < 4 * _one_hot_se(128, NONE, "default")
    assert 3 <= default["effective_keys"] <= 8
    # Scaled: nothing depends on d_k, about 40 of 64 keys in play, no one-hot row, not uniform.
    scaled = [at[d, SQRT, "unit"] for d in dims]
    for key in ("max_weight", "entropy", "effective_keys"):
        values = [r[key] for r in scaled]
        assert max(values) / min(values) < 1.1, "scaled rows should not depend on d_k"
    assert all(35 < r["effective_keys"] < 45 and r["one_hot"] == 0 for r in scaled)
    assert all(r["entropy"] < math.log(64) - 0.2 for r in scaled)
    # 1/d_k drifts towards the uniform row.
    by_d = [at[d, INV, "unit"]["effective_keys"] for d in dims]
    assert by_d == sorted(by_d) and by_d[-1] > 63


def test_a_typical_key_gets_almost_no_weight_without_the_divisor(run_snippet):
    at = {(r["d_k"], r["rule"], r["init"]): r
          for r in run_snippet("failure-modes/saturation.py").namespace["result"]}
    # "about 1e-7 of the uniform weight at d_k = 64 and 1e-10 at 128" (to the order of magnitude)
    assert 1e-8 < at[64, NONE, "unit"]["key_weight"] < 1e-6
    assert 1e-11 < at[128, NONE, "unit"]["key_weight"] < 1e-9
    assert all(r["key_weight"] > 0.5 for (_, rule, _), r in at.items() if rule == SQRT)
    # The logit gradient of a key is proportional to its weight: p_j (g_j - p.g).
    g = runtime.generator(0)
    z, upstream = torch.randn(7, dtype=torch.float64, generator=g), torch.randn(7, generator=g)
    p = torch.softmax(z, -1)
    expected = p * (upstream.double() - (p * upstream.double()).sum())
    assert torch.allclose(jacobian(p) @ upstream.double(), expected, atol=1e-12)


# ---------------------------------------------------------------- Jacobian


def test_jacobian_curve_small_at_both_ends_and_where_rows_sit(run_snippet):
    result = run_snippet("failure-modes/jacobian.py").namespace["result"]
    curve = result["curve"]
    marked = {(r["d_k"], r["rule"], r["init"]): r for r in result["marked"]}
    norms = [r["spectral_norm"] for r in curve]
    peak = max(norms)
    assert peak < 0.5
    assert norms[0] == pytest.approx(1 / 64, rel=0.05)  # flat row: 1/n
    assert norms[-1] < 0.5 * peak  # falling towards 0 for one-hot rows
    assert curve[0]["trace"] == pytest.approx(1 - 1 / 64, rel=0.01)
    traces = [r["trace"] for r in curve]
    assert all(b <= a + 1e-9 for a, b in zip(traces, traces[1:]))  # trace falls steadily
    scaled = marked[128, SQRT, "unit"]
    for (_, rule, init), r in marked.items():
        if rule is NONE:
            assert r["spectral_norm"] > scaled["spectral_norm"]  # the surprise in the prose
            assert r["trace"] < scaled["trace"]
            if init == "unit":
                assert r["trace"] < 0.5 * scaled["trace"]  # "most of it with unit initialisation"
    assert norms[-1] < marked[128, NONE, "unit"]["spectral_norm"]


def test_row_length_decides_which_row_has_the_larger_spectral_norm(run_snippet):
    namespace = run_snippet("failure-modes/row_length.py").namespace
    at = {(r["d_k"], r["n"], r["rule"]): r for r in namespace["result"]}
    lengths = namespace["ROW_LENGTHS"]
    assert lengths == [8, 16, 32, 64, 128]
    for d in (64, 128):
        norm = {(n, rule): at[d, n, rule]["spectral_norm"] for n in lengths for rule in (NONE, SQRT)}
        se = {(n, rule): at[d, n, rule]["spectral_norm_se"] for n in lengths for rule in (NONE, SQRT)}
        # 16 keys: the scaled row's is larger; 64 keys: the unscaled row's (4 standard errors)
        assert norm[16, SQRT] - norm[16, NONE] > 4 * math.hypot(se[16, SQRT], se[16, NONE])
        assert norm[64, NONE] - norm[64, SQRT] > 4 * math.hypot(se[64, SQRT], se[64, NONE])
        # the scaled row spreads over more keys and its norm falls steadily; the unscaled one's
        # rises from 8 keys to 64 and more (by 0.03-0.08 over seed offsets 0-19)
        scaled = [norm[n, SQRT] for n in lengths]
        assert all(b < a for a, b in zip(scaled, scaled[1:]))
        assert norm[64, NONE] > norm[8, NONE] and norm[128, NONE] > norm[8, NONE]
        # "about 11 keys of 16, 41 of 64" (10.8-11.2 and 40.5-41.3 over offsets 0-19)
        assert 10 < at[d, 16, SQRT]["effective_keys"] < 12
        assert 39 < at[d, 64, SQRT]["effective_keys"] < 43
        assert all(at[d, n, SQRT]["one_hot"] == 0 for n in lengths)
    # one-hot rows at d_k = 128: "about two in five rows of 16 keys" (0.42-0.48 over offsets
    # 0-19), "a third of rows of 64" (asserted by the saturation test)
    assert 0.35 < at[128, 16, NONE]["one_hot"] < 0.5
    assert at[128, 16, NONE]["one_hot"] > at[128, 64, NONE]["one_hot"]


# ---------------------------------------------------------------- gradients at init


def test_query_gradients_are_not_smaller_without_the_divisor(run_snippet):
    rows = run_snippet("failure-modes/init_gradients.py").namespace["result"]
    at = {(r.arm.init, r.d_k, r.arm.scale): r for r in rows}
    dims = [16, 64, 128, 256]
    unit_none = [at[("unit", d, NONE)].ratio_q_v for d in dims]
    assert all(r > 1 for r in unit_none)  # larger than W_V's, not smaller
    # and growing with d_k: "at 256 more than 1.5 times its value at 16" (seed offsets 0-19:
    # 1.7-2.2 times; from 128 to 256 it can dip, so the page claims no step-by-step rise)
    assert unit_none[-1] > 1.5 * unit_none[0]
    for d in dims:
        assert 0.5 < at[("unit", d, SQRT)].ratio_q_v < 1  # "a bit smaller"
        assert 0.25 < at[("default", d, SQRT)].ratio_q_v < 0.4  # "about three times smaller"
        for init in ("unit", "default"):
            assert at[(init, d, NONE)].ratio_q_v > 0.1  # nowhere orders of magnitude below
            # W_K's gradient is W_Q's size (3 seeds: their ratio spreads 0.90-1.11 over seed offsets 0-19)
            assert at[(init, d, NONE)].grad_k == pytest.approx(at[(init, d, NONE)].grad_q, rel=0.15)
    shares = [at[("unit", d, NONE)].top_decile_share for d in dims]
    assert all(s > 0.5 for s in shares) and all(b > a for a, b in zip(shares, shares[1:]))
    for d in dims:  # over seed offsets 0-19: 0.33-0.44 (unit), 0.27-0.35 (default)
        assert 0.30 < at[("unit", d, SQRT)].top_decile_share < 0.45
        assert 0.25 < at[("default", d, SQRT)].top_decile_share < 0.36


# ---------------------------------------------------------------- training


def _table(run_snippet):
    rows = run_snippet("failure-modes/ablation_table.py").namespace["result"]
    return {(r.optimizer, r.d_k, r.arm.init, r.arm.scale): r for r in rows}


def test_sgd_without_divisor_stays_near_chance_and_collapses(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("sgd", d, init, NONE)]
            assert min(r.final_loss) > CHANCE / 2
            assert max(r.entropy_end) < 0.05  # a single key
    # "learns the task ... its mean loss ends below 0.7": the mean over the 3 seeds (one seed
    # may lag behind; at d_k = 64 a seed ends at 0.36 +- 0.17, so the mean of 3 has an SE of 0.1)
    for d in (64, 256):
        for init in ("unit", "default"):
            assert mean(at[("sgd", d, init, SQRT)].final_loss) < 0.7
    for init in ("unit", "default"):  # at d_k = 16, 1/sqrt(d_k) is still behind 1/d_k
        sqrt, inv = at[("sgd", 16, init, SQRT)], at[("sgd", 16, init, INV)]
        assert min(sqrt.final_loss) > max(inv.final_loss)
    runs = run_snippet("failure-modes/entropy_curves.py").namespace["result"]
    assert runs is run_ablation(ABLATION), "the figures share the memoised runs"
    for d in (16, 64, 256):
        history = runs[("sgd", d)]
        for init in ("unit", "default"):  # the collapsed head often reads the wrong key
            assert history.arm(Arm(NONE, init=init)).final().accuracy.max() < 0.6
        early = history.step <= 25  # collapsed by step 25
        assert history.arm(Arm(NONE, init="unit")).entropy[early][-1].max() < 0.25


def test_adam_without_divisor_learns_but_slower_at_256(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64):  # "below 1 in every seed"
        for init in ("unit", "default"):
            assert max(at[("adam", d, init, NONE)].final_loss) < 1.0
    # Speed, unit init, the median seed's steps to loss 0.5: later than 1/sqrt(d_k) at d_k = 16
    # (110-165 against 85-95 over seed offsets 0-19), more than twice as many at 64 (2.2-3.1x)
    none = {d: at[("adam", d, "unit", NONE)].median_steps for d in (16, 64)}
    sqrt = {d: at[("adam", d, "unit", SQRT)].median_steps for d in (16, 64)}
    assert math.isfinite(none[16]) and none[16] > sqrt[16]
    assert math.isfinite(none[64]) and none[64] > 2 * sqrt[64]
    for init in ("unit", "default"):
        # "after 200 steps its mean loss is still above 0.75": a seed ends at 1.3 +- 0.3
        # (default init; 2.0 +- 0.6 unit), so the mean of 3 sits 3 SE above 0.75. Single seeds
        # do get below 0.5 late (step 65-200, in a few seeds of 22), so the page no longer says none does.
        assert mean(at[("adam", 256, init, NONE)].final_loss) > 0.75
        for scaling in (SQRT, INV):  # "every seed of every scaled arm has got below 0.5"
            assert at[("adam", 256, init, scaling)].reached == len(ABLATION.seeds)


def test_inverse_dk_trains_with_adam_and_is_slow_with_sgd_at_256(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("adam", d, init, INV)]
            assert max(r.final_loss) < 0.2
            assert max(r.entropy_end) < UNIFORM / 2  # well below uniform
    for d in (16, 64):
        for init in ("unit", "default"):
            assert max(at[("sgd", d, init, INV)].final_loss) < 0.5
    for init in ("unit", "default"):
        r = at[("sgd", 256, init, INV)]
        # "slow": behind 1/sqrt(d_k) on average; single seeds of the two rules overlap
        assert mean(r.final_loss) > mean(at[("sgd", 256, init, SQRT)].final_loss)
        assert min(r.entropy_start) > 0.99 * UNIFORM
        assert max(r.ratio_q_v) < 0.1
        assert min(r.entropy_end) > UNIFORM / 2  # "barely leave the uniform row"


def test_scaled_heads_still_become_sharp(run_snippet):
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            for init in ("unit", "default"):
                r = at[(opt, d, init, SQRT)]
                assert min(r.entropy_start) > 0.75 * UNIFORM  # E[H] = 0.83 ln 8 at unit logit variance
                assert mean(r.entropy_end) < 0.25 * mean(r.entropy_start)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            ends = {s: mean(at[("adam", d, init, s)].entropy_end) for s in Scale}
            assert ends[INV] == max(ends.values())
            assert ends[INV] < 0.5 * mean(at[("adam", d, init, INV)].entropy_start)


def test_default_init_starts_less_peaked(run_snippet):
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            default, unit = at[(opt, d, "default", NONE)], at[(opt, d, "unit", NONE)]
            assert min(default.entropy_start) > max(unit.entropy_start)


def test_symptom_verdicts(run_snippet):
    result = run_snippet("failure-modes/symptoms.py").namespace["result"]
    v = result["verdicts"]
    assert v[("plateau", "sgd")] == "reproduced"
    assert v[("entropy", "all")] == "partly"
    # "With Adam it trains at d_k = 16 and 64 and is only slower at d_k = 256"
    assert v[("plateau", "adam")] != "reproduced"
    adam = [r for r in result["rows"] if r["optimizer"] == "adam"]
    assert all(max(r["final_loss"]) < CHANCE / 2 for r in adam if r["d_k"] < 256)
    # "within the same order of magnitude as W_V's in every Adam run"
    assert v[("gradients", "all")] != "reproduced"
    assert all(r["ratio_median"] > 0.1 for r in adam)
    # ... "and after them: every Adam run's median ratio is above a tenth" (lowest seed over
    # seed offsets 0-19: 0.12)
    assert all(min(r["ratio_late"]) > 0.1 for r in adam)
    # Once stalled (SGD): at d_k = 256, unit init, each seed's median ratio after step 50 is below
    # a quarter and the median seed's below a tenth (over offsets 0-19: every seed 3e-4 to 0.2,
    # the median seed 0.003 to 0.093); at d_k = 16 not every seed falls below a tenth.
    assert v[("gradients", "stalled")] == "partly"
    stalled = {(r["init"], r["d_k"]): r["ratio_late"] for r in result["rows"] if r["optimizer"] == "sgd"}
    assert max(stalled["unit", 256]) < 0.25
    assert sorted(stalled["unit", 256])[1] < 0.1
    assert max(stalled["unit", 16]) > 0.1
