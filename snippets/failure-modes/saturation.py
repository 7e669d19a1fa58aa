"""Saturation at initialisation: how peaked a row of attention is, unscaled and scaled.

Queries and keys have independent unit-variance components (the textbook model). For
each head dimension we draw rows of N_KEYS keys and report the mean largest weight, the
mean row entropy (ln N_KEYS is a uniform row) and the share of rows that are
effectively one-hot (largest weight above 0.99).
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, row_stats, scores

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
N_KEYS, N_QUERIES, N_KEY_SETS = 64, 32, 16
ONE_HOT = 0.99


def saturation(head_dims=HEAD_DIMS, seed=3):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in head_dims:
        stats = {"none": [], "scaled": []}
        for _ in range(N_KEY_SETS):  # fresh keys for every few queries
            q, k = random_qk(N_QUERIES, N_KEYS, d_k, generator, device=sdpa.device())
            stats["none"].append(row_stats(scores(q, k)))
            stats["scaled"].append(row_stats(scores(q, k, 1 / math.sqrt(d_k))))
        row = {"d_k": d_k}
        for arm, chunks in stats.items():
            top = torch.cat([c["max_weight"] for c in chunks])
            row[f"max_weight_{arm}"] = top.mean().item()
            row[f"entropy_{arm}"] = torch.cat([c["entropy"] for c in chunks]).mean().item()
            row[f"one_hot_{arm}"] = (top > ONE_HOT).float().mean().item()
        rows.append(row)
    return rows


result = saturation()

print(
    sdpa.markdown_table(
        ["d_k", "largest weight, q·k", "entropy, q·k", "one-hot rows, q·k", "largest weight, scaled", "entropy, scaled", "one-hot rows, scaled"],
        [
            (r["d_k"], r["max_weight_none"], r["entropy_none"], f"{r['one_hot_none']:.0%}",
             r["max_weight_scaled"], r["entropy_scaled"], f"{r['one_hot_scaled']:.0%}")
            for r in result
        ],
        caption=f"Rows of {N_KEYS} keys, {N_QUERIES * N_KEY_SETS} queries per head dimension, unit-variance "
        f"q and k. Entropy in nats; a uniform row has ln {N_KEYS} = {math.log(N_KEYS):.2f}. "
        f"One-hot: largest weight above {ONE_HOT}.",
    )
)

figure = sdpa.Figure(
    "failure-modes-saturation",
    caption="Left: the mean row entropy against d_k; the dotted line is a uniform row "
    f"(ln {N_KEYS}). Right: the share of rows whose largest weight exceeds {ONE_HOT}. "
    "Unscaled rows (solid) lose entropy steadily as d_k grows and more and more of them "
    "become one-hot; scaled rows (dashed) look the same at every d_k.",
    alt="Two panels against head dimension. Unscaled entropy falls steadily towards zero "
    "while scaled entropy stays flat below the uniform line; the one-hot share rises for unscaled rows "
    "and stays at zero for scaled rows.",
    ncols=2,
    size=(7.4, 3.0),
)
with figure as (left, right):
    dims = [r["d_k"] for r in result]
    for arm, style, color, label in [("none", "o-", sdpa.PALETTE[3], "q·k"), ("scaled", "s--", sdpa.PALETTE[0], "q·k/√d_k")]:
        left.plot(dims, [r[f"entropy_{arm}"] for r in result], style, color=color, label=label)
        right.plot(dims, [100 * r[f"one_hot_{arm}"] for r in result], style, color=color, label=label)
    left.axhline(math.log(N_KEYS), color=sdpa.INK, ls=":", lw=1, label=f"uniform, ln {N_KEYS}")
    left.set(xscale="log", xlabel="head dimension d_k", ylabel="mean row entropy (nats)", ylim=(0, None))
    right.set(xscale="log", xlabel="head dimension d_k", ylabel=f"rows with max weight > {ONE_HOT} (%)")
    for ax in (left, right):
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
    left.legend()
print(figure.html)
