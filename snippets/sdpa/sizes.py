"""How large every study is in the two profiles, written once.

``SDPA_PROFILE`` picks the profile (:func:`sdpa.runtime.profile`): ``quick`` is the default
on a CPU (CI, ``mkdocs serve``, the tests), ``full`` the default on a GPU and what the
published site is built with. :func:`sizes` returns the current profile's :class:`Sizes`;
every snippet takes its studies from it, so one snippet runs at either size. The language
model's two sizes are :data:`sdpa.language.SIZES`, beside its study.

What the full profile adds, and why:

* five seeds where the quick build has two or three (the failure-modes ablation, the
  temperature study, the QK-norm sweep), so that every spread it quotes is estimated on at
  least five;
* a tuning whose best rates are picked on three seeds, in windows of seven rates (two grid
  steps wider), and confirmed on seven fresh seeds; the budget stays 150 steps, because
  that budget is what the tuned verdicts are about;
* the long runs that tell speed from capability: every head dimension, and the 4-head
  block too, for 3,000 steps (the quick build runs one head dimension for 600).
"""

from __future__ import annotations

from dataclasses import dataclass

from sdpa.gpt import GPTSweep
from sdpa.runtime import profile
from sdpa.studies import (QK_NORM_ARMS, Ablation, LearnedScaleStudy, PlateauStudy,
                          TemperatureStudy, Tuning, block_tuning, own_rate_tuning)

__all__ = ["SIZES", "Sizes", "sizes"]


@dataclass(frozen=True)
class Sizes:
    """One profile's studies; the derived ones (own rate, block, learned scale) follow
    from its tuning."""

    ablation: Ablation
    temperature: TemperatureStudy
    qk_norm: GPTSweep
    tuning: Tuning
    plateau: PlateauStudy
    block_plateau: PlateauStudy | None  # the block run long (the full profile only)

    @property
    def own_rate(self) -> Tuning:
        return own_rate_tuning(self.tuning)

    @property
    def block(self) -> Tuning:
        return block_tuning(self.tuning)

    @property
    def block_own_rate(self) -> Tuning:
        return block_tuning(self.own_rate)

    @property
    def learned_scale(self) -> LearnedScaleStudy:
        """A learned scale above the best rate, on the tuning's confirmation seeds."""
        return LearnedScaleStudy(steps=self.tuning.steps, seeds=self.tuning.confirm_seeds)


_QUICK_TUNING = Tuning()
_FULL_TUNING = Tuning(points=7, sweep_seeds=(0, 1, 2), confirm_seeds=tuple(range(3, 10)))
_FIVE = tuple(range(5))

SIZES: dict[str, Sizes] = {
    "quick": Sizes(
        ablation=Ablation(),
        temperature=TemperatureStudy(),
        qk_norm=GPTSweep(arms=tuple(QK_NORM_ARMS.values())),
        tuning=_QUICK_TUNING,
        plateau=PlateauStudy(tuning=_QUICK_TUNING, d_ks=(64,), steps=600),
        block_plateau=None,
    ),
    "full": Sizes(
        ablation=Ablation(seeds=_FIVE),
        temperature=TemperatureStudy(seeds=_FIVE),
        qk_norm=GPTSweep(arms=tuple(QK_NORM_ARMS.values()), seeds=_FIVE),
        tuning=_FULL_TUNING,
        plateau=PlateauStudy(tuning=_FULL_TUNING, d_ks=(16, 64, 256), steps=3000),
        block_plateau=PlateauStudy(tuning=block_tuning(_FULL_TUNING), d_ks=(16,), steps=3000),
    ),
}


def sizes() -> Sizes:
    """The studies at the current profile's size."""
    return SIZES[profile()]

