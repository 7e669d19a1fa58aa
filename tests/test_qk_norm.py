"""The QK-norm page's claims, with the tolerances its prose states."""

from __future__ import annotations

import math

import pytest
import torch

from sdpa.transformer import ARMS, Config, Options, PAGE_SWEEP, Sweep, copy_batch, init_params, train_sweep

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims

BASE, NO_SCALE, QK, QK_NO_SCALE, CAP = list(ARMS)


def test_bound_holds_and_plain_logits_grow_like_c_squared(run_snippet):
    rows = run_snippet("qk-norm/bound.py").namespace["result"]
    first = rows[0]
    for r in rows:
        assert r["max_normed"] <= r["bound"]
        assert r["max_normed"] == pytest.approx(first["max_normed"], rel=1e-4), "normalised logits must not move"
        assert r["max_plain"] / first["max_plain"] == pytest.approx(r["factor"] ** 2, rel=0.01)
        assert r["std_normed"] == pytest.approx(1.0, rel=0.05), "QK-norm + 1/sqrt(d_k) gives unit std"
    assert rows[-1]["factor"] == 100 and rows[-1]["max_plain"] / first["max_plain"] > 9_900


def test_logit_growth_at_high_lr(run_snippet):
    result = run_snippet("qk-norm/logit_growth.py").namespace["result"]
    curves = result["curves"]
    assert result["lr"] == max(PAGE_SWEEP.lrs)
    for name in (BASE, NO_SCALE):  # four orders of magnitude or more, hundreds or thousands
        c = curves[name]
        assert c["mean"][-1] > 100
        assert c["mean"][-1] / c["mean"][0] >= 1e4
    for name in (QK, QK_NO_SCALE):  # within the bound, at every step and seed
        c = curves[name]
        assert c["qk_norm"]
        for logits, bounds in zip(c["per_seed"], c["bound"]):
            assert all(z <= b * (1 + 1e-5) for z, b in zip(logits, bounds))
        assert max(max(s) for s in c["per_seed"]) < 100  # "in the tens at most"
    cap = curves[CAP]
    assert max(max(s) for s in cap["per_seed"]) <= cap["softcap"] * (1 + 1e-6)
    # "much as in the plain arm, into the hundreds"
    assert cap["raw_final"] > 100 and cap["raw_final"] > curves[BASE]["mean"][-1] / 3


def test_qk_norm_bound_at_initialisation_is_sqrt_dk():
    sweep = PAGE_SWEEP
    cfg = sweep.arms[0]
    params = init_params(cfg, [0])
    from sdpa.transformer import qk_norm_bound

    bound = qk_norm_bound(params, cfg, Options.of([ARMS[QK]]))
    assert bound.item() == pytest.approx(math.sqrt(cfg.d_head))


def test_head_entropy_collapse(run_snippet):
    arms = run_snippet("qk-norm/entropy.py").namespace["result"]["arms"]
    assert arms[BASE]["final_min"] < 0.05, "a 1/sqrt(d_k) head collapses to a one-hot row"
    assert arms[QK]["final_min"] > 0.5, "every QK-norm head keeps more than half a nat"
    # Without the factor, QK-norm starts far sharper than with it.
    assert arms[QK_NO_SCALE]["first_mean"] < 0.5 * arms[QK]["first_mean"]


def test_lr_sensitivity_claims(run_snippet):
    result = run_snippet("qk-norm/lr_sensitivity.py").namespace["result"]
    rows = {r["arm"]: r for r in result["rows"]}
    lrs, initial = result["lrs"], result["initial_loss"]
    assert initial == pytest.approx(math.log(PAGE_SWEEP.arms[0].vocab), abs=0.05)
    for r in rows.values():  # no arm learns the task at the highest rate: within 0.4 of L0
        assert abs(r["loss"][-1] - initial) < 0.4
    assert min(min(r["loss"]) for r in rows.values()) < 0.2  # the task is learnable
    for qk in (QK, QK_NO_SCALE):  # lowest rate: more than half a nat below both plain arms
        for plain in (BASE, NO_SCALE):
            assert rows[qk]["loss"][0] < rows[plain]["loss"][0] - 0.5
    for plain in (BASE, NO_SCALE):  # next rate: QK-norm with the factor still below both
        assert rows[QK]["loss"][1] < rows[plain]["loss"][1]
    for i in (0, 1):  # the soft-cap curve hides the 1/sqrt(d_k) one at the lowest rates
        assert abs(rows[CAP]["loss"][i] - rows[BASE]["loss"][i]) < 0.02
    # The gains do not learn the factor away: two to five times the scaled arm's logit.
    for i, lr in enumerate(lrs):
        if lr <= 1e-2:
            ratio = rows[QK_NO_SCALE]["final_max_logit"][i] / rows[QK]["final_max_logit"][i]
            assert 2 < ratio < 5


def test_lr_sensitivity_definition():
    from sdpa.transformer import lr_sensitivity

    assert lr_sensitivity(torch.tensor([1.0, 0.5, 3.0]), 2.0) == pytest.approx((0.5 + 0 + 1.5) / 3)


def test_copy_task_targets():
    cfg = Config()
    inputs, targets = copy_batch(4, cfg, torch.Generator().manual_seed(0))
    half = cfg.context // 2
    assert inputs.shape == targets.shape == (4, cfg.context)
    assert torch.equal(inputs[:, :half], inputs[:, half:])
    assert (targets[:, : half - 1] == -1).all() and (targets[:, half - 1 :] >= 0).all()


def test_stacked_runs_equal_independent_runs():
    """Training members together gives each the same result as training it alone."""
    small = dict(steps=6, lrs=(3e-3, 3e-2), seeds=(0,))
    together = train_sweep(Sweep(arms=(ARMS[BASE], ARMS[QK]), **small))
    alone = train_sweep(Sweep(arms=(ARMS[QK],), **{**small, "lrs": (3e-2,)}))
    assert torch.allclose(together.loss[:, 1, 1], alone.loss[:, 0, 0], rtol=1e-4, atol=1e-6)
    assert torch.allclose(together.max_logit[:, 1, 1], alone.max_logit[:, 0, 0], rtol=1e-4, atol=1e-5)


def test_experiment_matches_the_prose():
    """The page describes the model and the sweep in words; keep them in step."""
    cfg = PAGE_SWEEP.arms[0]
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_head) == (2, 2, 32, 16)
    assert (cfg.vocab, cfg.context // 2) == (8, 8)
    assert PAGE_SWEEP.lrs == (1e-3, 3e-3, 1e-2, 3e-2, 1e-1) and len(PAGE_SWEEP.seeds) == 2
    assert (PAGE_SWEEP.steps, PAGE_SWEEP.batch) == (120, 8)
    assert ARMS[CAP].softcap == 10.0 and ARMS[QK].qk_norm == "rms" and ARMS[NO_SCALE].scale == "none"
    assert len(PAGE_SWEEP.arms) * len(PAGE_SWEEP.lrs) * len(PAGE_SWEEP.seeds) == 50
