"""The training ablation: loss against step for every arm, with Adam and with plain SGD.

Associative recall (8 key/value pairs, 32 possible values) learned by one attention
head, for the arms no scaling, 1/sqrt(d_k) and 1/d_k, at d_k = 16, 64 and 256, with
both initialisations and three seeds, all trained as one batched computation per
(optimiser, d_k) by ``sdpa.recall.scale_ablation`` (memoised: the other figures and
tables of this page reuse the same runs).
"""

import math

import sdpa
from sdpa.recall import draw_ablation, scale_ablation

sdpa.seed(6)
runs = scale_ablation()
result = {key: h["loss"] for key, (cfg, h) in runs.items()}  # (recorded steps, arms, seeds)
n_values = next(iter(runs.values()))[0].n_values

figure = sdpa.Figure(
    "failure-modes-loss",
    caption="Training loss against step. Top row Adam, bottom row plain SGD; columns are head "
    "dimensions. Solid line and band: unit-variance init, mean and min–max over 3 seeds; dashed: "
    f"PyTorch's default init, mean over 3 seeds. Dotted: chance, ln {n_values}. Each point is the "
    "loss on that step's fresh batch.",
    alt="Six panels of loss curves for three scalings and two initialisations. Under SGD the "
    "unscaled arm stays near chance; under Adam it learns more slowly than the scaled arms, "
    "and at d_k 256 it is still far from zero at the end.",
    nrows=2,
    ncols=3,
    size=(10.2, 5.8),
    sharey=True,
)
with figure as axes:
    draw_ablation(axes, runs, "loss", "cross-entropy loss", (math.log(n_values), f"chance, ln {n_values}"))
print(figure.html)
