"""Can the softmax output's variance blow up? The head's output variance, measured.

A head's output for one query is sum_j p_j v_j. With values of independent unit-variance
components, each output component has variance sum_j p_j^2 (the weights are fixed by the
query and keys, the values independent of them): 1/n for a uniform row over n keys, 1 for
a strictly one-hot row (one weight exactly 1), never more. We take the survey's rows of 64
keys (``sdpa.survey``), draw values, and measure the variance of the output with and without
the factor, beside the mean of sum_j p_j^2 that predicts it.
"""

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale

generator = sdpa.seed(11)
HEAD_DIMS = [8, 64, 128]
N_KEYS, D_V = 64, 16
RULES = [Scale.NONE, Scale.INV_SQRT]


def output_variance(rule, d_k):
    p = survey.rows(d_k, survey.factor(rule, d_k), N_KEYS).p  # (rows, keys)
    v = torch.randn(p.shape[0], N_KEYS, D_V, generator=generator, dtype=torch.float64)
    out = torch.einsum("rk,rkc->rc", p.to(sdpa.device()), v.to(sdpa.device())).cpu()
    # measured minus predicted is a mean over rows of (mean of out^2) - sum p^2: its standard
    # error over the rows (the values are fresh in every row)
    miss = (out**2).mean(-1) - (p**2).sum(-1)
    return {"d_k": d_k, "rule": rule, "measured": out.var().item(),
            "measured_se": miss.std().item() / miss.numel() ** 0.5,
            "predicted": (p**2).sum(-1).mean().item()}


result = [output_variance(rule, d_k) for d_k in HEAD_DIMS for rule in RULES]

print(
    sdpa.markdown_table(
        ["d_k", "logits", "output variance, measured", "mean of ∑ p²"],
        [(r["d_k"], "q·k" if r["rule"] is Scale.NONE else "q·k/√d_k", r["measured"],
          r["predicted"]) for r in result],
        caption=f"Rows of {N_KEYS} keys, {survey.N_ROWS:,} queries per head dimension, values "
        f"with {D_V} independent unit-variance components. The output variance lies between "
        f"1/{N_KEYS} ≈ {1 / N_KEYS:.3f} (a uniform row) and 1 (a strictly one-hot row) whatever "
        "the logits.",
    )
)
