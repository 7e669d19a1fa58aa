"""1/sqrt(d_k) against a fixed temperature, across head dimensions.

Unit-variance queries and keys, rows of 64 keys. One arm divides by sqrt(d_k); the other
divides by a fixed T = 8, which equals sqrt(d_k) at d_k = 64 and nowhere else. We measure
the standard deviation of the softmax input and the mean largest weight per row.
"""

import math

import sdpa
from sdpa.attention import random_qk, row_stats, scores

HEAD_DIMS = [4, 8, 16, 32, 64, 128, 256, 512]
FIXED_T = 8.0
N_QUERIES, N_KEYS = 256, 64


def compare_scalings(head_dims=HEAD_DIMS, seed=12):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in head_dims:
        q, k = random_qk(N_QUERIES, N_KEYS, d_k, generator, device=sdpa.device())
        for arm, factor in (("1/sqrt(d_k)", 1 / math.sqrt(d_k)), (f"1/T, T = {FIXED_T:g}", 1 / FIXED_T)):
            z = scores(q, k, factor)
            stats = row_stats(z)
            rows.append({"d_k": d_k, "arm": arm, "std": z.std().item(),
                         "max_weight": stats["max_weight"].mean().item(),
                         "entropy": stats["entropy"].mean().item()})
    return rows


result = compare_scalings()
ARMS = list(dict.fromkeys(r["arm"] for r in result))

figure = sdpa.Figure(
    "temperature-fixed-vs-sqrt",
    caption=f"Rows of {N_KEYS} unit-variance keys, {N_QUERIES} queries per head dimension. Left: the "
    f"standard deviation of the softmax input. Right: the mean largest weight (a uniform row gives "
    f"1/{N_KEYS}). Dividing by √d_k gives the same softmax at every d_k; a fixed T = {FIXED_T:g} "
    f"matches it only at d_k = {int(FIXED_T ** 2)}: flatter below, sharper above.",
    alt=f"Two log-x plots against head dimension {HEAD_DIMS[0]} to {HEAD_DIMS[-1]}. The 1/sqrt(d_k) curves are "
    f"flat: standard deviation near 1 and a constant largest weight. The fixed-T curves rise: standard "
    f"deviation from {result[1]['std']:.2f} to {result[-1]['std']:.1f}, largest weight from "
    f"{result[1]['max_weight']:.2f} to {result[-1]['max_weight']:.2f}.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    for color, arm in zip(sdpa.PALETTE, ARMS):
        mine = [r for r in result if r["arm"] == arm]
        left.plot([r["d_k"] for r in mine], [r["std"] for r in mine], "o-", color=color, label=arm)
        right.plot([r["d_k"] for r in mine], [r["max_weight"] for r in mine], "o-", color=color, label=arm)
    right.axhline(1 / N_KEYS, color=sdpa.INK, lw=0.8, ls=":", label=f"uniform, 1/{N_KEYS}")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
        ax.set_xlabel("head dimension d_k")
    left.set(yscale="log", ylabel="std of softmax input")
    left.minorticks_off()
    left.set_yticks([0.25, 0.5, 1, 2], ["0.25", "0.5", "1", "2"])
    right.set(ylabel="mean largest weight", ylim=(0, 1))
    left.legend()
    right.legend()
print(figure.html)
