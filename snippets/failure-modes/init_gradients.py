"""Gradient norms of W_Q, W_K and W_V at initialisation, unscaled and scaled.

One attention head on the associative-recall task of ``sdpa.tasks`` (pairs of unit-
variance token embeddings), with unit-variance initialisation (q and k components of
variance 1) and with PyTorch's default nn.Linear initialisation (variance about 1/3).
Norms are averaged over 8 batches and 12 seeds. The last columns show where W_Q's
gradient comes from: the share of the summed squared per-example query gradient that
the top tenth of examples carry.
"""

import math
from dataclasses import dataclass

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm, RecallExperiment, query_grad_per_example, recall_at_init, scale_arms

HEAD_DIMS = [16, 64, 128, 256]
N_BATCHES = 8
TASK = dict(n_pairs=8, batch=32, d_model=32, seeds=tuple(range(12)))
ARMS = scale_arms(inits=("unit", "default"), rules=(Scale.NONE, Scale.INV_SQRT))


@dataclass(frozen=True)
class Row:
    """One arm at one head dimension; means over batches and seeds."""

    d_k: int
    arm: Arm
    grad_q: float
    grad_k: float
    grad_v: float
    entropy: float
    ratio_q_v: float  # mean over seeds of ‖∇W_Q‖ / ‖∇W_V‖
    top_decile_share: float  # of the summed squared per-example query gradient


def top_decile_share(norms):
    """Share of sum(norm^2) held by the largest 10% of examples, per seed."""
    sq = norms.pow(2).sort(-1, descending=True).values
    return sq[..., : sq.shape[-1] // 10].sum(-1) / sq.sum(-1)


def init_gradients(head_dims=HEAD_DIMS):
    rows = []
    for d_k in head_dims:
        experiment = RecallExperiment(d_k=d_k, arms=ARMS, **TASK)
        at_init = recall_at_init(experiment, n_batches=N_BATCHES)
        per_example = query_grad_per_example(experiment, n_batches=N_BATCHES)
        for arm in ARMS:
            m = at_init.arm(arm).record(0)  # fields (seeds,)
            rows.append(Row(
                d_k=d_k, arm=arm,
                grad_q=m.grad_q.mean().item(), grad_k=m.grad_k.mean().item(),
                grad_v=m.grad_v.mean().item(), entropy=m.entropy.mean().item(),
                ratio_q_v=(m.grad_q / m.grad_v).mean().item(),
                top_decile_share=top_decile_share(per_example[arm]).mean().item(),
            ))
    return rows


result = init_gradients()

print(
    sdpa.markdown_table(
        ["init", "d_k", "scaling", "‖∇W_Q‖", "‖∇W_K‖", "‖∇W_V‖", "W_Q / W_V",
         "top 10% share of ∇q", "entropy"],
        [
            (r.arm.init, r.d_k, r.arm.scale.label, r.grad_q, r.grad_k, r.grad_v, r.ratio_q_v,
             f"{r.top_decile_share:.0%}", r.entropy)
            for r in sorted(result, key=lambda r: (r.arm.init != "unit", r.d_k))
        ],
        align="lrlrrrrrr",
        caption="Frobenius norms of the loss gradient at initialisation, mean of "
        f"{N_BATCHES} batches of {TASK['batch']} sequences and {len(TASK['seeds'])} seeds. Top 10% "
        "share: the share of the summed squared per-example query gradient carried by the tenth "
        "of examples with the largest one (10% if even). Entropy: the query row's, in nats "
        f"(uniform: ln {TASK['n_pairs']} ≈ {math.log(TASK['n_pairs']):.2f}).",
    )
)
