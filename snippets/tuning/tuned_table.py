"""Each scale rule at its best learning rate, beside the ablation's fixed rate.

The same runs as the sweep figure (``sdpa.studies.run_tuning``, memoised). The tuned
loss is measured on fresh seeds at the rate the sweep seeds chose; the fixed-rate
loss is the sweep's own, at the failure-modes ablation's rate (Adam 0.01, SGD 1), which
every window holds.
"""

import sdpa
from sdpa.sizes import sizes
from sdpa.studies import run_tuning
from sdpa.training import OPTIMIZER_LABELS

TUNING = sizes().tuning

result = run_tuning(TUNING)
n_confirm = len(TUNING.confirm_seeds)


def rate(lr):
    return f"{lr:.3g}"


def spread(losses):
    """Mean ± standard deviation (min–max) of a tensor of per-seed losses."""
    low, high = losses.min().item(), losses.max().item()
    return f"{losses.mean().item():.3f} ± {losses.std().item():.3f} ({low:.2g}–{high:.2g})"


def fixed(arm):
    losses = arm.fixed_loss
    return f"{losses.mean().item():.3f} ({losses.min().item():.2g}–{losses.max().item():.2g})"


print(
    sdpa.markdown_table(
        ["optimiser", "d_k", "scaling", "swept rates", "best rate",
         "tuned loss, mean ± std (min–max)", "fixed rate", "fixed-rate loss, mean (min–max)"],
        [(OPTIMIZER_LABELS[a.optimizer], a.d_k, a.rule.label,
          f"{rate(a.lrs[0])}–{rate(a.lrs[-1])}", rate(a.best_lr), spread(a.confirm_loss),
          rate(a.fixed_lr), fixed(a))
         for a in result.values()],
        align="lrlllrlr",
        caption=f"Tuned loss: {n_confirm} fresh seeds at the best rate of "
        f"{len(TUNING.sweep_seeds)} sweep seeds; fixed-rate loss: the sweep seeds at the "
        "failure-modes ablation's rate. Final loss is the mean of the last "
        f"{TUNING.last} recorded batches of {TUNING.steps} steps (each a fresh batch of "
        f"{TUNING.ablation.batch} sequences).",
    )
)
