"""Final loss against learning rate: every scale rule tuned at every d_k, Adam and SGD.

The recall task and one-head model of the failure-modes ablation (same shapes, 150 of its
200 steps), but each rule sweeps its own window of learning rates on the sweep seeds
(``sdpa.studies.run_tuning``, memoised: the table and the transfer figure reuse it).
The best rate of each rule is then rerun on fresh seeds. Every window holds the
ablation's fixed rate, marked by an open circle.
"""

import math

import sdpa
from sdpa.plots import draw_tuning, label_grid
from sdpa.sizes import sizes
from sdpa.studies import run_tuning

TUNING = sizes().tuning
CEILING = 10.0  # a run above this (or diverged) is drawn here

result = run_tuning(TUNING)  # {(optimiser, d_k, rule): TunedArm}
n_sweep, n_confirm = len(TUNING.sweep_seeds), len(TUNING.confirm_seeds)
n_values = TUNING.sweep("adam", TUNING.d_ks[0], TUNING.rules[0]).n_values  # every sweep's
spacing = 10 ** (1 / TUNING.per_decade)

figure = sdpa.Figure(
    "tuning-sweeps",
    caption=f"Final loss (mean of the last {TUNING.last} recorded batches of "
    f"{TUNING.steps} steps) against learning rate. Top row Adam, bottom row plain "
    f"SGD; columns are head dimensions. Lines: mean over {n_sweep} sweep seeds, band: their "
    f"range, rates spaced by ×{spacing:.2f}; a run that diverged or ends above {CEILING:g} is "
    f"drawn at {CEILING:g}. Filled marker with bar: the best rate rerun on {n_confirm} fresh "
    f"seeds, mean and range. Open marker: the failure-modes ablation's fixed rate (a point of "
    f"the sweep), mean. Dotted: chance, ln {n_values}.",
    alt="Six panels of U-shaped curves of final loss against learning rate on log axes, one "
    "curve per scale rule. The unscaled rule's minimum is higher than the scaled rules' in "
    "every panel; with SGD its open fixed-rate marker sits far to the right of its curve.",
    nrows=2,
    ncols=3,
    size=(10.2, 6.2),
    sharey=True,
)
with figure as axes:
    for row, optimizer in zip(axes, TUNING.optimizers):
        for ax, d_k in zip(row, TUNING.d_ks):
            draw_tuning(ax, [result[(optimizer, d_k, rule)] for rule in TUNING.rules],
                        CEILING, math.log(n_values))
    label_grid(axes, list(TUNING.optimizers), list(TUNING.d_ks), "learning rate",
               "final loss (nats)")
print(figure.html)
