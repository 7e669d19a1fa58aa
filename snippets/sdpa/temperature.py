"""The temperature page's recall runs: the scale rules at several head sizes, a learned
scale, and one head trained alone by the plain loop for the exact identities (the Adam
equivalence here, folding on the practice page). Its sizes are in :mod:`sdpa.sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from sdpa.attention import Scale
from sdpa.models import RecallHead
from sdpa.recall import (Arm, RecallExperiment, member_lrs, recall_loss, recall_model,
                         scale_arms, schedule)
from sdpa.runtime import device
from sdpa.tasks import recall_batches
from sdpa.training import make_optimizer, train

#: ``torch.optim.Adam``'s default epsilon.
ADAM_EPS = 1e-8


@dataclass(frozen=True)
class TemperatureStudy:
    """The temperature page's recall runs: the three scale rules at every head dimension
    of ``d_ks``; at ``main_d_k`` also a learned scale.

    The Adam equivalence runs at ``identity_d_k``, where r = d_k^(-1/4) is a power of two
    (16: r = 1/2), so that rescaling by r is exact in floating point: there
    ``reparameterised`` keeps the factor s = 1/sqrt(d_k) but multiplies W_Q and W_K, their
    initialisation and their learning rate by r (s r^2 = 1/d_k), and ``init_only``
    multiplies the initialisation alone.
    """

    d_ks: tuple[int, ...] = (16, 32, 128)
    main_d_k: int = 128
    identity_d_k: int = 16
    steps: int = 120
    record_every: int = 5
    seeds: tuple[int, ...] = (0, 1, 2)
    learned: Arm = Arm(Scale.INV_SQRT, learn_scale=True)

    @property
    def r(self) -> float:
        return self.identity_d_k**-0.25

    @property
    def reparameterised(self) -> Arm:
        return Arm(Scale.INV_SQRT, q_init=self.r, k_init=self.r, lr_q=self.r, lr_k=self.r)

    @property
    def init_only(self) -> Arm:
        return Arm(Scale.INV_SQRT, q_init=self.r, k_init=self.r)

    def experiment(self, d_k: int) -> RecallExperiment:
        arms = scale_arms()
        if d_k == self.main_d_k:
            arms += (self.learned,)
        return RecallExperiment(d_k=d_k, steps=self.steps, record_every=self.record_every,
                                seeds=self.seeds, arms=arms)

    def identity_experiment(self) -> RecallExperiment:
        """The recall head at ``identity_d_k``, the study's optimiser, rate and length."""
        return replace(self.experiment(self.identity_d_k), arms=())


def train_alone(experiment: RecallExperiment, arm: Arm, seed: int,
                eps: dict[str, float] | None = None) -> tuple[RecallHead, list[float]]:
    """One member of ``experiment`` (its first learning rate) trained alone by the plain
    loop, :func:`sdpa.training.train`, as :func:`sdpa.recall.train_member` does; under
    Adam, the weights named in ``eps`` get Adam's epsilon multiplied by that constant.

    An exact identity needs it: a weight multiplied by a, its gradient divided by a, is the
    same run under Adam only if its epsilon is divided by a too. Returns the trained model
    and the loss of every step.
    """
    model = recall_model(experiment, arm, seed).to(device())
    rates = member_lrs(arm, experiment.lrs[0], [name for name, _ in model.named_parameters()])
    groups = [{"params": [model.get_parameter(name)], "lr": rate}
              | ({"eps": ADAM_EPS * (eps or {}).get(name, 1.0)}
                 if experiment.optimizer == "adam" else {})
              for name, rate in rates.items() if rate is not None]
    optimizer = make_optimizer(experiment.optimizer, groups)
    data = recall_batches(experiment.task, seed, experiment.steps + 1).to(device())
    batches = ((*data.tokens(t), data.target[t]) for t in range(experiment.steps))
    return model, train(model, optimizer, batches, recall_loss, schedule(experiment, optimizer))


def first_gradient(experiment: RecallExperiment, arm: Arm, seed: int) -> torch.Tensor:
    """The gradient of W_Q on the first batch of :func:`train_alone`, at initialisation."""
    model = recall_model(experiment, arm, seed).to(device())
    data = recall_batches(experiment.task, seed, experiment.steps + 1).to(device())
    recall_loss(model(*data.tokens(0)), data.target[0]).backward()
    return model.W_Q.weight.grad
