"""The spread of QK^T grows like sqrt(d_k); dividing by sqrt(d_k) brings it back to 1.

Queries and keys have independent standard-normal components, the textbook model of a
freshly initialised head. For each head dimension we form 1,000 x 1,000 scores and
measure their standard deviation, before and after scaling.
"""

import math

import sdpa
from sdpa.attention import random_qk, scores

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
N_TOKENS = 1000


def measure_score_std(head_dims=HEAD_DIMS, n=N_TOKENS, seed=0):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in head_dims:
        q, k = random_qk(n, n, d_k, generator, device=sdpa.device())
        raw = scores(q, k)
        rows.append(
            {
                "d_k": d_k,
                "sqrt_d_k": math.sqrt(d_k),
                "std_unscaled": raw.std().item(),
                "std_scaled": (raw / math.sqrt(d_k)).std().item(),
                "mean_unscaled": raw.mean().item(),
            }
        )
    return rows


result = measure_score_std()

print(
    sdpa.markdown_table(
        ["d_k", "√d_k", "std of q·k", "std of q·k / √d_k"],
        [
            (r["d_k"], r["sqrt_d_k"], r["std_unscaled"], r["std_scaled"])
            for r in result
        ],
        caption=f"{N_TOKENS:,} queries × {N_TOKENS:,} keys per head dimension, "
        "components drawn from N(0, 1).",
    )
)
