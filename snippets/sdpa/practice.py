"""The practice page's training study: one recall block split into more or fewer heads.

A pre-LayerNorm block (:class:`sdpa.models.RecallBlock`) of fixed ``d_model`` split into
``heads`` heads of d_model / heads, with and without the factor, at a few learning rates and
seeds, Adam. Its size is in :mod:`sdpa.sizes` (the full profile only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sdpa.ablation import final_loss
from sdpa.attention import Scale
from sdpa.recall import RecallExperiment, run_recall, scale_arms


@dataclass(frozen=True)
class HeadCountStudy:
    """Head counts x rules x learning rates x seeds, one block of ``d_model``."""

    heads: tuple[int, ...] = (1, 2, 4, 8)
    d_model: int = 64
    steps: int = 150
    last: int = 10  # the final loss: the mean of the last `last` recorded steps
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2)
    seeds: tuple[int, ...] = tuple(range(5))
    rules: tuple[Scale, ...] = (Scale.NONE, Scale.INV_SQRT)

    def experiment(self, heads: int) -> RecallExperiment:
        return RecallExperiment(d_k=self.d_model // heads, d_model=self.d_model, heads=heads,
                                steps=self.steps, arms=scale_arms(rules=self.rules),
                                lrs=self.lrs, seeds=self.seeds, optimizer="adam")


def final_losses(study: HeadCountStudy, heads: int) -> dict[Scale, torch.Tensor]:
    """One head count's final losses: {rule: (rates, seeds)}."""
    experiment = study.experiment(heads)
    loss = final_loss(run_recall(experiment).metrics, study.last, math.log(experiment.n_values))
    return {rule: loss[i] for i, rule in enumerate(study.rules)}
