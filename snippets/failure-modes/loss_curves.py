"""The training ablation: loss against step for every arm, with Adam and with plain SGD.

Associative recall (8 key/value pairs, 32 possible values) learned by one attention
head, for the arms no scaling, 1/sqrt(d_k) and 1/d_k, at d_k = 16, 64 and 256, with
both initialisations and five seeds (the same in the quick and the full build), all
trained as one batched computation per (optimiser, d_k) by ``sdpa.ablation.run_ablation``
(memoised: the other figures and tables of this page reuse the same runs).
"""

import math

import sdpa
from sdpa.plots import draw_ablation
from sdpa.sizes import sizes
from sdpa.ablation import run_ablation

ABLATION = sizes().ablation
runs = run_ablation(ABLATION)
result = runs  # {(optimiser, d_k): RecallHistory}
n_values = next(iter(runs.values())).experiment.n_values
n_seeds = len(ABLATION.seeds)

figure = sdpa.Figure(
    "failure-modes-loss",
    caption="Training loss against step at one fixed rate per optimiser: top row Adam, bottom "
    f"row plain SGD, columns head dimensions. Solid line and band: unit-variance init, mean and "
    f"min–max over {n_seeds} seeds; dashed: PyTorch's default init, mean. Dotted: chance, "
    f"ln {n_values}.",
    alt="Six panels of loss curves for three scalings and two initialisations. Under SGD the "
    "unscaled arm stays near chance; under Adam it falls more slowly than the scaled arms, "
    "and at d_k 256 it is still far from zero at the end.",
    nrows=2,
    ncols=3,
    size=(10.2, 5.8),
    sharey=True,
)
with figure as axes:
    chance = (math.log(n_values), f"chance, ln {n_values}")
    draw_ablation(axes, runs, "loss", "cross-entropy loss", chance)
print(figure.html)
