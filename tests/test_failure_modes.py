"""The failure-modes page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest
import torch

from sdpa import runtime, survey
from sdpa.recall import Arm, RecallConfig, at_init, run
from sdpa.softmax import jacobian, jacobian_stats

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims

CHANCE, UNIFORM = math.log(32), math.log(8)


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
        none = [at[d, "none", init] for d in dims]
        for a, b in zip(none, none[1:]):  # every number moves towards one-hot
            assert b["max_weight"] > a["max_weight"] and b["entropy"] < a["entropy"]
            assert b["effective_keys"] < a["effective_keys"] and b["one_hot"] >= a["one_hot"]
    # Unit variance: fewer than two keys in play from d_k = 64 on; one-hot rows a fifth at 64,
    # a third at 128, about half at 256, more than half at 512.
    assert all(at[d, "none", "unit"]["effective_keys"] < 2 for d in dims if d >= 64)
    one_hot = {d: (at[d, "none", "unit"]["one_hot"], _one_hot_se(d, "none", "unit")) for d in dims}
    assert 1 / 6 < one_hot[64][0] < 1 / 4 and 4 * one_hot[64][1] < 0.05
    assert 0.25 < one_hot[128][0] < 0.4 and 4 * one_hot[128][1] < 0.06
    assert 0.4 < one_hot[256][0] < 0.6 and 0.5 < one_hot[512][0] - 4 * one_hot[512][1]
    # Default init at 128: about one row in a hundred one-hot, a handful of keys in play.
    default = at[128, "none", "default"]
    assert 0.002 < default["one_hot"] < 0.02 and 4 * _one_hot_se(128, "none", "default") < 0.01
    assert 3 <= default["effective_keys"] <= 8
    # Scaled: nothing depends on d_k, about 40 of 64 keys in play, no one-hot row, not uniform.
    scaled = [at[d, "1/sqrt(d_k)", "unit"] for d in dims]
    for key in ("max_weight", "entropy", "effective_keys"):
        values = [r[key] for r in scaled]
        assert max(values) / min(values) < 1.1, "scaled rows should not depend on d_k"
    assert all(35 < r["effective_keys"] < 45 and r["one_hot"] == 0 for r in scaled)
    assert all(r["entropy"] < math.log(64) - 0.2 for r in scaled)
    # 1/d_k drifts towards the uniform row.
    by_d = [at[d, "1/d_k", "unit"]["effective_keys"] for d in dims]
    assert by_d == sorted(by_d) and by_d[-1] > 63


def test_a_typical_key_gets_almost_no_weight_without_the_divisor(run_snippet):
    at = {(r["d_k"], r["rule"], r["init"]): r
          for r in run_snippet("failure-modes/saturation.py").namespace["result"]}
    # "about 1e-7 of the uniform weight at d_k = 64 and 1e-10 at 128" (to the order of magnitude)
    assert 1e-8 < at[64, "none", "unit"]["key_weight"] < 1e-6
    assert 1e-11 < at[128, "none", "unit"]["key_weight"] < 1e-9
    assert all(r["key_weight"] > 0.5 for (_, rule, _), r in at.items() if rule == "1/sqrt(d_k)")
    # The logit gradient of a key is proportional to its weight: p_j (g_j - p.g).
    g = runtime.generator(0)
    z, upstream = torch.randn(7, dtype=torch.float64, generator=g), torch.randn(7, generator=g)
    p = torch.softmax(z, -1)
    expected = p * (upstream.double() - (p * upstream.double()).sum())
    assert torch.allclose(jacobian(p) @ upstream.double(), expected, atol=1e-12)


# ---------------------------------------------------------------- Jacobian


def test_jacobian_formula_matches_autograd_and_its_properties():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(6, dtype=torch.float64, generator=g) * 2
    p = torch.softmax(z, -1)
    auto = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), z)
    J = jacobian(p)
    assert torch.allclose(J, auto, atol=1e-12)
    assert torch.allclose(J, J.T)
    assert torch.allclose(J @ torch.ones(6, dtype=torch.float64), torch.zeros(6, dtype=torch.float64), atol=1e-12)
    assert torch.linalg.eigvalsh(J).min() > -1e-12  # positive semi-definite
    assert jacobian_stats(p)["trace"].item() == pytest.approx(1 - (p * p).sum().item())
    tie = torch.tensor([0.5, 0.5, 0.0, 0.0], dtype=torch.float64)
    assert jacobian_stats(tie)["spectral_norm"].item() == pytest.approx(0.5)
    uniform = torch.full((8,), 1 / 8, dtype=torch.float64)
    assert jacobian_stats(uniform)["spectral_norm"].item() == pytest.approx(1 / 8)
    assert jacobian_stats(uniform)["trace"].item() == pytest.approx(1 - 1 / 8)
    one_hot = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    assert jacobian(one_hot).abs().max().item() == 0
    rows = torch.softmax(torch.randn(200, 16, generator=g, dtype=torch.float64) * 3, -1)
    assert jacobian_stats(rows)["spectral_norm"].max().item() <= 0.5 + 1e-12


def test_jacobian_curve_small_at_both_ends_and_where_rows_sit(run_snippet):
    result = run_snippet("failure-modes/jacobian.py").namespace["result"]
    curve, marked = result["curve"], result["marked"]
    norms = [r["spectral_norm"] for r in curve]
    peak = max(norms)
    assert peak < 0.5
    assert norms[0] == pytest.approx(1 / 64, rel=0.05)  # flat row: 1/n
    assert norms[-1] < 0.5 * peak  # falling towards 0 for one-hot rows
    assert curve[0]["trace"] == pytest.approx(1 - 1 / 64, rel=0.01)
    traces = [r["trace"] for r in curve]
    assert all(b <= a + 1e-9 for a, b in zip(traces, traces[1:]))  # trace falls steadily
    scaled = marked["scaled, d_k = 128"]
    for name, r in marked.items():
        if name.startswith("unscaled"):
            assert r["spectral_norm"] > scaled["spectral_norm"]  # the surprise in the prose
            assert r["trace"] < scaled["trace"]
            if "unit init" in name:
                assert r["trace"] < 0.5 * scaled["trace"]  # "most of it with unit initialisation"
    assert norms[-1] < marked["unscaled, unit init, d_k = 128"]["spectral_norm"]


# ---------------------------------------------------------------- gradients at init


def test_query_gradients_are_not_smaller_without_the_divisor(run_snippet):
    rows = run_snippet("failure-modes/init_gradients.py").namespace["result"]
    at = {(r["init"], r["d_k"], r["scaling"]): r for r in rows}
    dims = [16, 64, 128, 256]
    unit_none = [at[("unit", d, "none")]["ratio_q_v"] for d in dims]
    assert all(r > 1 for r in unit_none)  # larger than W_V's, not smaller
    assert all(b > a for a, b in zip(unit_none, unit_none[1:]))  # and growing with d_k
    for d in dims:
        assert at[("unit", d, "1/sqrt(d_k)")]["ratio_q_v"] < 1  # "a bit smaller"
        assert at[("unit", d, "1/sqrt(d_k)")]["ratio_q_v"] > 0.5
        assert 0.25 < at[("default", d, "1/sqrt(d_k)")]["ratio_q_v"] < 0.4  # "about three times smaller"
        for init in ("unit", "default"):
            assert at[(init, d, "none")]["ratio_q_v"] > 0.1  # nowhere orders of magnitude below
            assert at[(init, d, "none")]["grad_k"] == pytest.approx(at[(init, d, "none")]["grad_q"], rel=0.1)
    shares = [at[("unit", d, "none")]["top_decile_share"] for d in dims]
    assert all(s > 0.5 for s in shares) and all(b > a for a, b in zip(shares, shares[1:]))
    for init in ("unit", "default"):
        for d in dims:
            assert 0.25 < at[(init, d, "1/sqrt(d_k)")]["top_decile_share"] < 0.45  # "near a third"


# ---------------------------------------------------------------- training


def _table(run_snippet):
    rows = run_snippet("failure-modes/ablation_table.py").namespace["result"]
    return {(r["optimizer"], r["d_k"], r["init"], r["scaling"]): r for r in rows}


def test_sgd_without_divisor_stays_near_chance_and_collapses(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("sgd", d, init, "none")]
            assert min(r["final_loss"]) > CHANCE / 2
            assert max(r["entropy_end"]) < 0.05  # a single key
    for d in (64, 256):
        for init in ("unit", "default"):
            assert max(at[("sgd", d, init, "1/sqrt(d_k)")]["final_loss"]) < 0.5
    for init in ("unit", "default"):  # at d_k = 16, 1/sqrt(d_k) is still behind 1/d_k
        assert min(at[("sgd", 16, init, "1/sqrt(d_k)")]["final_loss"]) > max(at[("sgd", 16, init, "1/d_k")]["final_loss"])
    from sdpa.recall import final, scale_ablation

    for d in (16, 64, 256):  # the collapsed head often reads the wrong key
        assert final(scale_ablation()[("sgd", d)][1], "accuracy")[[0, 3]].max() < 0.6
    loss = run_snippet("failure-modes/loss_curves.py").namespace["result"]
    entropy = run_snippet("failure-modes/entropy_curves.py").namespace["result"]
    for d in (16, 64, 256):
        assert entropy[("sgd", d)][5, 0].max() < 0.25  # arm 0 = unit, none: collapsed by step 25
        assert loss[("sgd", d)].shape[1:] == (6, 3)


def test_adam_without_divisor_learns_but_slower_at_256(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64):
        for init in ("unit", "default"):
            assert max(at[("adam", d, init, "none")]["final_loss"]) < 1.0
    for init in ("unit", "default"):
        assert at[("adam", 256, init, "none")]["reached"] == 0
        for scaling in ("1/sqrt(d_k)", "1/d_k"):
            assert at[("adam", 256, init, scaling)]["reached"] == 3


def test_inverse_dk_trains_with_adam_and_is_slow_with_sgd_at_256(run_snippet):
    at = _table(run_snippet)
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            r = at[("adam", d, init, "1/d_k")]
            assert max(r["final_loss"]) < 0.2
            assert max(r["entropy_end"]) < UNIFORM / 2  # well below uniform
    for d in (16, 64):
        for init in ("unit", "default"):
            assert max(at[("sgd", d, init, "1/d_k")]["final_loss"]) < 0.5
    for init in ("unit", "default"):
        r = at[("sgd", 256, init, "1/d_k")]
        assert min(r["final_loss"]) > max(at[("sgd", 256, init, "1/sqrt(d_k)")]["final_loss"])
        assert min(r["entropy_start"]) > 0.99 * UNIFORM
        assert max(r["ratio_q_v"]) < 0.1
        assert min(r["entropy_end"]) > UNIFORM / 2  # "barely leave the uniform row"


def test_scaled_heads_still_become_sharp(run_snippet):
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            for init in ("unit", "default"):
                r = at[(opt, d, init, "1/sqrt(d_k)")]
                assert min(r["entropy_start"]) > 0.8 * UNIFORM
                assert sum(r["entropy_end"]) / 3 < 0.25 * sum(r["entropy_start"]) / 3
    for d in (16, 64, 256):
        for init in ("unit", "default"):
            ends = {s: sum(at[("adam", d, init, s)]["entropy_end"]) / 3 for s in ("none", "1/sqrt(d_k)", "1/d_k")}
            assert ends["1/d_k"] == max(ends.values())
            assert ends["1/d_k"] < 0.5 * sum(at[("adam", d, init, "1/d_k")]["entropy_start"]) / 3


def test_default_init_starts_less_peaked(run_snippet):
    at = _table(run_snippet)
    for opt in ("adam", "sgd"):
        for d in (16, 64, 256):
            assert min(at[(opt, d, "default", "none")]["entropy_start"]) > max(at[(opt, d, "unit", "none")]["entropy_start"])


def test_symptom_verdicts(run_snippet):
    result = run_snippet("failure-modes/symptoms.py").namespace["result"]
    v = result["verdicts"]
    assert v[("plateau", "sgd")] == "reproduced"
    assert v[("plateau", "adam")] == "not reproduced"
    assert v[("entropy", "all")] == "partly"
    assert v[("gradients", "all")] == "not reproduced"
    adam = [r for r in result["rows"] if r["optimizer"] == "adam"]
    assert all(r["ratio_median"] > 0.1 for r in adam)  # same order of magnitude as W_V's


# ---------------------------------------------------------------- the shared library


def test_batched_training_equals_separate_runs_and_is_deterministic():
    arms = (Arm(1.0, label="a"), Arm(0.125, label="b"))
    both = RecallConfig(d_k=16, d_model=16, n_pairs=4, batch=8, steps=5, seeds=(0, 1), arms=arms)
    alone = RecallConfig(d_k=16, d_model=16, n_pairs=4, batch=8, steps=5, seeds=(1,), arms=arms[1:])
    h, h1 = run.__wrapped__(both), run.__wrapped__(alone)
    assert torch.allclose(h["loss"][:, 1, 1], h1["loss"][:, 0, 0], rtol=1e-5, atol=1e-6)
    again = run.__wrapped__(both)
    assert all(torch.equal(h[k], again[k]) for k in h)


def test_adam_logit_scale_equals_scaled_qk_init_and_lr():
    c = 1 / 16
    arms = (Arm(c), Arm(1.0, q_init=c**0.5, k_init=c**0.5, lr_q=c**0.5, lr_k=c**0.5))
    h = run.__wrapped__(RecallConfig(d_k=16, d_model=16, n_pairs=4, batch=8, steps=20, seeds=(0,), arms=arms))
    assert torch.allclose(h["loss"][:, 0], h["loss"][:, 1], rtol=1e-3, atol=1e-4)


def test_default_init_gives_narrower_unscaled_logits():
    cfg = RecallConfig(d_k=64, seeds=(0, 1, 2), arms=(Arm(1.0, init="unit"), Arm(1.0, init="default")))
    h = at_init(cfg, n_batches=4)
    # Unscaled max |logit| is wider with unit-variance init than with the default init.
    assert (h["max_logit"][0] > h["max_logit"][1]).all()
