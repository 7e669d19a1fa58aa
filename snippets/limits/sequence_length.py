"""Sequence length: at a fixed scale a matching key fades as n grows; log-n scaling holds it.

Each query has one matching key (component correlation rho, d_k = 64) among n - 1
unrelated keys, scaled by 1/sqrt(d_k). The fixed arm keeps that scale at every n; the
log-n arm multiplies it by log(n) / log(16), so the two agree at n = 16 (the length a
model would have been trained at). 512 queries per row length; the figure shows the
weight on the matching key.
"""

import math

import torch

import sdpa
from sdpa.attention import entropy
from sdpa.tasks import planted_scores

generator = sdpa.seed(13)
D_K, N_TRAIN, N_QUERIES = 64, 16, 512
LENGTHS = [4**e for e in range(2, 8)]  # 16 ... 16,384 keys
RHOS = [0.5, 0.7]


def sweep_length(generator):
    rows = []
    for rho in RHOS:
        for n in LENGTHS:
            z = planted_scores(N_QUERIES, n, D_K, rho, generator).to(sdpa.device()) / math.sqrt(D_K)
            for arm, factor in (("fixed", 1.0), ("log n", math.log(n) / math.log(N_TRAIN))):
                p = torch.softmax(z * factor, dim=-1)
                rows.append({"rho": rho, "n": n, "arm": arm,
                             "match_weight": p[:, 0].mean().item(),
                             "max_weight": p.max(-1).values.mean().item(),
                             "entropy": entropy(p).mean().item()})
    return rows


result = sweep_length(generator)


def series(rho, arm, key):
    return [r[key] for r in result if r["rho"] == rho and r["arm"] == arm]


figure = sdpa.Figure(
    "sequence-length",
    caption=f"One matching key among n − 1 unrelated ones (d_k = {D_K}, {N_QUERIES} queries per "
    f"point; ρ is the query–key correlation of the match). Solid: fixed scale 1/√d_k. Dashed: "
    f"the same scale times log n / log {N_TRAIN}. Left: mean weight on the matching key. Right: "
    f"mean entropy "
    f"in nats; the dotted line is log n, the entropy of a uniform row.",
    alt="Two plots against row length n from 16 to 16384 on a log axis. Under the fixed scale the "
    "match's weight falls towards zero and the entropy climbs along log n; under log-n scaling the "
    "match's weight stays high and the entropy stays low, more so for the stronger match.",
    ncols=2,
    size=(7.6, 3.2),
)
with figure as (left, right):
    for color, rho in zip(sdpa.PALETTE, RHOS):
        for arm, style in (("fixed", "o-"), ("log n", "s--")):
            left.plot(LENGTHS, series(rho, arm, "match_weight"), style, ms=3, color=color,
                      label=f"ρ = {rho}, {arm}")
            right.plot(LENGTHS, series(rho, arm, "entropy"), style, ms=3, color=color)
    right.plot(LENGTHS, [math.log(n) for n in LENGTHS], ":", color=sdpa.INK, lw=0.9,
               label="log n (uniform)")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("keys per row, n")
    left.set(ylabel="mean weight on the match", ylim=(0, 1))
    right.set(ylabel="mean entropy (nats)")
    left.legend(fontsize=7.5)
    right.legend(fontsize=7.5)
print(figure.html)
