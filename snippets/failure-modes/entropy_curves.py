"""The training ablation: the query row's attention entropy against step.

The same runs as the loss figure (``sdpa.ablation.run_ablation`` is memoised).
Entropy is in nats, averaged over the batch; a uniform row over 8 pairs has ln 8, a
strictly one-hot row 0. It shows where each arm starts and that the scaled arms still become sharp.
"""

import math

import sdpa
from sdpa.plots import draw_ablation
from sdpa.sizes import sizes
from sdpa.ablation import run_ablation

ABLATION = sizes().ablation
runs = run_ablation(ABLATION)
result = runs  # {(optimiser, d_k): RecallHistory}
n_pairs = ABLATION.n_pairs

figure = sdpa.Figure(
    "failure-modes-entropy",
    caption="Mean attention entropy of the query row against step, same runs and layout as the "
    f"loss figure. Dotted: a uniform row, ln {n_pairs}.",
    alt="Six panels of entropy curves. The unscaled arm starts well below the uniform line; the "
    "1/sqrt(d_k) and 1/d_k arms start near it and most of them fall as training proceeds.",
    nrows=2,
    ncols=3,
    size=(10.2, 5.8),
    sharey=True,
)
with figure as axes:
    uniform = (math.log(n_pairs), f"uniform, ln {n_pairs}")
    draw_ablation(axes, runs, "entropy", "attention entropy (nats)", uniform)
print(figure.html)
