"""The failure-modes page's training ablation: every scale rule with both initialisations at
one fixed learning rate per optimiser, and how any recall study reads a run's final loss.

:class:`Ablation` is also the setup every tuned recall study starts from (the task, the
one-head model, the batch): :mod:`sdpa.plane` and :mod:`sdpa.tuning` change only what they
tune. Its sizes in the two profiles are in :mod:`sdpa.sizes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sdpa.recall import (Optimizer, RecallExperiment, RecallHistory, RecallMetrics, run_recalls,
                         scale_arms)
from sdpa.runtime import each, memo


@dataclass(frozen=True)
class Ablation:
    """The failure-modes ablation: every scale rule with both initialisations, at one
    learning rate per optimiser, one recall experiment per (optimiser, d_k)."""

    d_ks: tuple[int, ...] = (16, 64, 256)
    optimizers: tuple[tuple[Optimizer, float], ...] = (("adam", 1e-2), ("sgd", 1.0))
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 200
    record_every: int = 5
    n_pairs: int = 8
    batch: int = 32
    d_model: int = 32

    def experiment(self, optimizer: Optimizer, lr: float, d_k: int) -> RecallExperiment:
        return RecallExperiment(
            d_k=d_k, d_model=self.d_model, n_pairs=self.n_pairs, batch=self.batch,
            optimizer=optimizer, lrs=(lr,), steps=self.steps, record_every=self.record_every,
            arms=scale_arms(inits=("unit", "default")), seeds=self.seeds,
        )


@memo
def run_ablation(ablation: Ablation) -> dict[tuple[Optimizer, int], RecallHistory]:
    """Every experiment of ``ablation``, keyed by (optimiser, d_k); the optimisers of one
    d_k train as one ensemble, the d_ks split between the processes that ask
    (:func:`sdpa.runtime.each`)."""
    calls = [(tuple(ablation.experiment(opt, lr, d_k) for opt, lr in ablation.optimizers),)
             for d_k in ablation.d_ks]
    runs = {(h.experiment.optimizer, h.experiment.d_k): h
            for histories in each(run_recalls, calls) for h in histories}
    return {(opt, d_k): runs[(opt, d_k)] for opt, _ in ablation.optimizers for d_k in ablation.d_ks}


#: A run whose final loss is NaN or above this many times the chance loss has diverged.
DIVERGED = 10


def final_loss(metrics: RecallMetrics, last: int, chance: float) -> torch.Tensor:
    """The mean loss of the last ``last`` records; inf for a run that diverged (NaN, or
    above ``DIVERGED`` times the ``chance`` loss)."""
    loss = metrics.final(last).loss
    ok = torch.isfinite(loss) & (loss <= DIVERGED * chance)
    return torch.where(ok, loss, torch.full_like(loss, math.inf))
