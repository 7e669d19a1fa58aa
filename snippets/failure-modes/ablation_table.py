"""The training ablation in one table: every arm, both optimisers, both initialisations.

Same runs as the loss and entropy figures (``sdpa.ablation.run_ablation``, memoised).
Final loss is the mean of the last 8 recorded batches (steps 165 to 200); "steps to
loss < 0.5" is the first recorded step at which a seed's batch loss falls below 0.5;
the gradient ratio is ‖∇W_Q‖ / ‖∇W_V‖ on the first batch.
"""

import math
from dataclasses import dataclass

import sdpa
from sdpa.recall import Arm
from sdpa.sizes import sizes
from sdpa.stats import mean
from sdpa.ablation import run_ablation
from sdpa.training import OPTIMIZER_LABELS

THRESHOLD = 0.5
ABLATION = sizes().ablation


@dataclass(frozen=True)
class Row:
    """One arm of one (optimiser, d_k) experiment; lists hold one value per seed."""

    optimizer: str
    d_k: int
    arm: Arm
    final_loss: list[float]
    steps_to_threshold: list[float]  # inf where a seed never got there
    entropy_start: list[float]
    entropy_end: list[float]
    ratio_q_v: list[float]  # ‖∇W_Q‖ / ‖∇W_V‖ on the first batch

    @property
    def reached(self) -> int:
        return sum(math.isfinite(s) for s in self.steps_to_threshold)

    @property
    def median_steps(self) -> float:
        """The median over seeds, inf unless every seed got there."""
        steps = sorted(self.steps_to_threshold)
        return steps[len(steps) // 2] if self.reached == len(steps) else math.inf


def summarise(runs):
    rows = []
    for (optimizer, d_k), history in runs.items():
        for arm in history.experiment.arms:
            curves = history.arm(arm)
            rows.append(Row(
                optimizer=optimizer, d_k=d_k, arm=arm,
                final_loss=curves.final().loss.tolist(),
                steps_to_threshold=history.steps_to(curves.loss, THRESHOLD).tolist(),
                entropy_start=curves.entropy[0].tolist(),
                entropy_end=curves.final().entropy.tolist(),
                ratio_q_v=(curves.grad_q[0] / curves.grad_v[0]).tolist(),
            ))
    return rows


runs = run_ablation(ABLATION)
result = summarise(runs)
n_seeds, n_pairs = len(ABLATION.seeds), ABLATION.n_pairs
n_values = next(iter(runs.values())).experiment.n_values


def loss_range(r):
    low, high = sdpa.fmt(min(r.final_loss)), sdpa.fmt(max(r.final_loss))
    return f"{sdpa.fmt(mean(r.final_loss))} ({low}–{high})"


def steps(r):
    if math.isfinite(r.median_steps):
        return f"{r.median_steps:.0f}"
    return f"not reached ({r.reached}/{n_seeds} seeds did)"


print(
    sdpa.markdown_table(
        ["optimiser", "init", "d_k", "scaling", "final loss, mean (min–max)",
         f"steps to loss < {THRESHOLD}", "entropy at step 0", "entropy at the end",
         "‖∇W_Q‖/‖∇W_V‖ at step 0"],
        [
            (OPTIMIZER_LABELS[r.optimizer], r.arm.init, r.d_k, r.arm.scale.label,
             loss_range(r), steps(r), mean(r.entropy_start), mean(r.entropy_end),
             mean(r.ratio_q_v))
            for r in sorted(result, key=lambda r: (r.optimizer, r.arm.init != "unit", r.d_k))
        ],
        align="llrlrrrrr",
        caption=f"{n_seeds} seeds per arm; entropies (nats, uniform ln {n_pairs} ≈ "
        f"{math.log(n_pairs):.2f}) and ratios are means over seeds. Steps: the median over seeds, "
        f"where every seed got there (recorded every {ABLATION.record_every} of {ABLATION.steps}). "
        f"Chance loss: ln {n_values} ≈ {math.log(n_values):.2f}.",
    )
)
