"""Small heads: a similarity estimated from few dimensions is noisy.

A query and its matching key share correlation rho = 0.5 in every component; q.k / d_k
estimates that correlation from d_k products, so its standard deviation is
sqrt((1 + rho^2) / d_k). Among 63 unrelated keys, how often does the matching key get
the highest score, and how much weight does softmax(q.k / sqrt(d_k)) give it?
"""

import math

import torch

import sdpa
from sdpa.tasks import planted_scores

generator = sdpa.seed(15)
HEAD_DIMS = [2, 4, 8, 16, 32, 64, 128, 256]
RHO, N_KEYS, N_QUERIES = 0.5, 64, 8000


def measure_noise(generator):
    rows = []
    for d_k in HEAD_DIMS:
        z = planted_scores(N_QUERIES, N_KEYS, d_k, RHO, generator).to(sdpa.device())
        estimate = z[:, 0] / d_k  # the matched pair's correlation, estimated from d_k products
        scaled = z / math.sqrt(d_k)
        rows.append({
            "d_k": d_k,
            "estimate_mean": estimate.mean().item(),
            "estimate_std": estimate.std().item(),
            "predicted_std": math.sqrt((1 + RHO**2) / d_k),
            "top1": (z.argmax(-1) == 0).float().mean().item(),
            "same_argmax": bool((scaled.argmax(-1) == z.argmax(-1)).all()),  # row by row
            "match_weight": torch.softmax(scaled, -1)[:, 0].mean().item(),
        })
    return rows


result = measure_noise(generator)

print(
    sdpa.markdown_table(
        ["d_k", "mean of q·k/d_k", "its std", "predicted √((1+ρ²)/d_k)", "match scores highest",
         "weight on match"],
        [(r["d_k"], r["estimate_mean"], r["estimate_std"], r["predicted_std"], r["top1"],
          r["match_weight"]) for r in result],
        caption=f"ρ = {RHO}, one matching key among {N_KEYS} per row, {N_QUERIES:,} queries per "
        "head dimension. “Match scores highest” is the share of rows whose largest score is the "
        f"matching key; chance is 1/{N_KEYS}. The weight is that key's mean softmax weight under "
        "1/√d_k.",
    )
)
