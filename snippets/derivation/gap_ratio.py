"""From spread to winner-takes-all: the best-minus-worst gap in a row, and e^gap.

For a query and a row of n keys, softmax weighs the best key e^gap times more than the
worst. We measure the median gap across 400 queries (40 sets of keys) for three row lengths, unscaled and
scaled, and compute the weight ratio it implies.
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, scores

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
ROW_LENGTHS = [8, 64, 512]
N_QUERIES, N_KEY_SETS = 400, 40


def measure_gaps(head_dims=HEAD_DIMS, row_lengths=ROW_LENGTHS, n_queries=N_QUERIES, seed=2):
    generator = sdpa.seed(seed)
    rows = []
    for n in row_lengths:
        for d_k in head_dims:
            gaps = []
            for _ in range(N_KEY_SETS):  # fresh keys every few rows, so no one key set dominates
                q, k = random_qk(n_queries // N_KEY_SETS, n, d_k, generator, device=sdpa.device())
                z = scores(q, k)
                gaps.append(z.max(-1).values - z.min(-1).values)
            gap = torch.cat(gaps)
            rows.append(
                {
                    "n": n,
                    "d_k": d_k,
                    "gap_unscaled": gap.median().item(),
                    "gap_scaled": (gap / math.sqrt(d_k)).median().item(),
                }
            )
    return rows


result = measure_gaps()
TABLE_N = 64

print(
    sdpa.markdown_table(
        ["d_k", "median gap, q·k", "weight ratio e^gap", "median gap, q·k/√d_k", "e^gap, scaled"],
        [
            (r["d_k"], r["gap_unscaled"], math.exp(r["gap_unscaled"]), r["gap_scaled"], math.exp(r["gap_scaled"]))
            for r in result
            if r["n"] == TABLE_N
        ],
        caption=f"Rows of {TABLE_N} keys, {N_QUERIES} queries per head dimension. The gap is the "
        "largest minus the smallest logit of a row; e^gap is how many times more weight "
        "softmax gives the best key than the worst.",
    )
)

figure = sdpa.Figure(
    "gap-growth",
    caption="The median best-minus-worst logit gap per row, against d_k, for rows of 8, 64 "
    "and 512 keys. Unscaled (solid) it grows like √d_k; scaled (dashed) it stays flat. "
    "Longer rows have wider gaps because the extremes of more samples lie further out.",
    alt="Log-log plot of the median logit gap against head dimension: three solid lines "
    "rising with slope one half, three dashed lines flat.",
    size=(5.2, 3.4),
)
with figure as ax:
    for color, n in zip(sdpa.PALETTE, ROW_LENGTHS):
        dims = [r["d_k"] for r in result if r["n"] == n]
        ax.plot(dims, [r["gap_unscaled"] for r in result if r["n"] == n], "o-", color=color, label=f"n = {n}, q·k")
        ax.plot(dims, [r["gap_scaled"] for r in result if r["n"] == n], "s--", color=color, label=f"n = {n}, scaled")
    ax.set(xscale="log", yscale="log", xlabel="head dimension d_k", ylabel="median gap (max − min logit)")
    ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
    ax.set_ylim(top=ax.get_ylim()[1] * 6)  # head-room for the legend above the lines
    ax.legend(ncols=2, fontsize=7.5, loc="upper left")
print(figure.html)
