"""The temperature page's recall runs: the scale rules at several head sizes, a learned
scale and two reparameterisations of W_Q and W_K. Its sizes are in :mod:`sdpa.sizes`."""

from __future__ import annotations

from dataclasses import dataclass

from sdpa.attention import Scale
from sdpa.recall import Arm, RecallExperiment, scale_arms


@dataclass(frozen=True)
class TemperatureStudy:
    """The temperature page's recall runs: the three scale rules at every head dimension
    of ``d_ks``; at ``main_d_k`` also a learned scale and two reparameterisations.

    With s = 1/sqrt(d_k) and r = d_k^(-1/4) (so that s r^2 = 1/d_k), ``reparameterised``
    keeps the factor s but multiplies W_Q and W_K, their initialisation and their
    learning rate by r: under Adam it is the 1/d_k arm in other coordinates.
    ``init_only`` multiplies the initialisation alone: the same forward pass at step 0.
    """

    d_ks: tuple[int, ...] = (16, 32, 128)
    main_d_k: int = 128
    steps: int = 120
    record_every: int = 5
    seeds: tuple[int, ...] = (0, 1, 2)
    learned: Arm = Arm(Scale.INV_SQRT, learn_scale=True)

    def reparameterised(self, d_k: int) -> Arm:
        r = d_k**-0.25
        return Arm(Scale.INV_SQRT, q_init=r, k_init=r, lr_q=r, lr_k=r)

    def init_only(self, d_k: int) -> Arm:
        r = d_k**-0.25
        return Arm(Scale.INV_SQRT, q_init=r, k_init=r)

    def experiment(self, d_k: int) -> RecallExperiment:
        arms = scale_arms()
        if d_k == self.main_d_k:
            arms += (self.learned, self.reparameterised(d_k), self.init_only(d_k))
        return RecallExperiment(d_k=d_k, steps=self.steps, record_every=self.record_every,
                                seeds=self.seeds, arms=arms)
