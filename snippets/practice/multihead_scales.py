"""Heads of different widths: comparable logits only with the 1/sqrt(d_k) factor.

A model may mix heads of different d_k (or compare designs that do). With unit-variance
queries and keys we measure, per head width, the spread of the logits and the mean
largest softmax weight over rows of 64 keys, unscaled and scaled, across 5 independent draws.
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, scores

generator = sdpa.seed(100)
HEAD_DIMS = [16, 32, 64, 128, 256]
N_KEYS, N_QUERIES, DRAWS = 64, 256, 5


def measure(generator, head_dims=HEAD_DIMS, draws=DRAWS):
    rows = []
    for d_k in head_dims:
        stats = {"none": [], "scaled": []}
        for _ in range(draws):  # independent draws of queries and keys
            q, k = random_qk(N_QUERIES, N_KEYS, d_k, generator, device=sdpa.device())
            for name, factor in (("none", 1.0), ("scaled", 1 / math.sqrt(d_k))):
                z = scores(q, k, factor)
                top = torch.softmax(z, -1).max(-1).values.mean().item()
                stats[name].append((z.std().item(), top))
        row = {"d_k": d_k}
        for name, values in stats.items():
            t = torch.tensor(values)
            row[f"std_{name}"] = t[:, 0].mean().item()
            row[f"max_weight_{name}"] = t[:, 1].mean().item()
            row[f"max_weight_{name}_sd"] = t[:, 1].std().item()
        rows.append(row)
    return rows


result = measure(generator)

figure = sdpa.Figure(
    "practice-multihead-scales",
    caption="Five head widths side by side. Left: the logit spread grows like √d_k without the "
    "factor (solid) and stays at 1 with it (dashed). Right: the mean largest softmax weight in "
    f"rows of {N_KEYS} keys: unscaled, the wide heads start peaked. Bars: ± one standard "
    f"deviation across {DRAWS} independent draws.",
    alt="Two panels against head dimension 16 to 256. Unscaled logit spread rises from 4 to 16 "
    "while the scaled spread stays at 1; the unscaled largest weight rises towards 1 while the "
    "scaled one stays low and flat.",
    ncols=2,
    size=(7.4, 3.0),
)
with figure as (left, right):
    dims = [r["d_k"] for r in result]
    left.plot(dims, [r["std_none"] for r in result], "o-", color=sdpa.PALETTE[1], label="q·k")
    left.plot(dims, [r["std_scaled"] for r in result], "s--", color=sdpa.PALETTE[0],
              label="q·k/√d_k")
    left.set(xscale="log", yscale="log", xlabel="head dimension d_k", ylabel="logit std")
    for arm, fmt, color, label in (("none", "o-", 1, "q·k"), ("scaled", "s--", 0, "q·k/√d_k")):
        right.errorbar(dims, [r[f"max_weight_{arm}"] for r in result],
                       yerr=[r[f"max_weight_{arm}_sd"] for r in result], fmt=fmt,
                       color=sdpa.PALETTE[color], capsize=3, label=label)
    right.set(xscale="log", ylim=(0, 1.02), xlabel="head dimension d_k",
              ylabel="mean largest weight")
    for ax in (left, right):
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
        ax.minorticks_off()
    right.legend()
print(figure.html)
