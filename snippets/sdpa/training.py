"""Training on ``torch.optim``: the one plain loop, for one model or for many at once.

:func:`train` is the usual loop (as in nanoGPT's ``train.py``): for each batch, the forward
pass, the loss, ``optimizer.zero_grad()``, ``loss.backward()``, ``optimizer.step()``::

    def loss_fn(output, target):
        return F.cross_entropy(output.logits, target)

    optimizer = make_optimizer("adam", [{"params": model.parameters(), "lr": 1e-2}])
    losses = train(model, optimizer, batches, loss_fn)  # batches of (query, pairs, target)

Every training number on the site comes from this loop. The site's experiments compare
many runs (scale rules x learning rates x seeds) that differ only in their numbers, not in
their code, and on a CPU the tiny models' runs cost mostly the fixed overhead of each
operation; so an :class:`Ensemble` runs them as one model, as PyTorch's model-ensembling
tutorial does: the *members'* weights stacked along a new first axis
(``torch.func.stack_module_state``), and the model's own ``forward`` run on every member
with ``torch.func.vmap`` and ``functional_call``. :func:`train` trains it like any model:
its loss is one loss per member, and the gradient of their sum gives each member the
gradient of its own loss, since no member's loss depends on another's weights. Adam and
SGD update every number on its own, so each member follows the run :func:`train` would
give it alone: ``tests/test_library.py`` checks it, member by member.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


#: The optimisers the site uses, by name.
OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
}
#: How the pages name them.
OPTIMIZER_LABELS: dict[str, str] = {"adam": "Adam", "sgd": "SGD"}


def make_optimizer(name: str, param_groups: list[dict], **options) -> torch.optim.Optimizer:
    """``torch.optim.Adam`` or ``torch.optim.SGD`` (no momentum) over ``param_groups``.

    ``foreach=True`` (the default on CUDA) updates each group's tensors together, which on
    the CPU saves a Python loop over the many stacked tensors of an ensemble.
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZERS)}, not {name!r}")
    return OPTIMIZERS[name](param_groups, **{"foreach": True, **options})


def warmup_cosine(optimizer: torch.optim.Optimizer, steps: int,
                  warmup: int = 0) -> torch.optim.lr_scheduler.LambdaLR:
    """The learning rate rising linearly over ``warmup`` steps, then decaying from its peak
    to zero on a cosine by step ``steps`` (``warmup=0``: the cosine alone)."""
    def factor(t: int) -> float:
        if t < warmup:
            return (t + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (t - warmup) / max(1, steps - warmup)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Iterable[tuple],
          loss_fn: Callable[[Any, torch.Tensor], torch.Tensor],
          schedule: torch.optim.lr_scheduler.LRScheduler | None = None,
          measure: Callable[[int, torch.Tensor, Any, torch.Tensor], None] | None = None,
          clip: float | None = None) -> list:
    """Train ``model`` on each batch of ``batches`` in turn; return the loss of each step.

    A batch is ``(*inputs, target)``; ``loss_fn(model(*inputs), target)`` gives the loss,
    one per member for an :class:`Ensemble`. ``schedule``, if any, moves the learning rate
    after every step. ``measure(step, loss, output, target)``, if given, reads each step's
    forward and backward pass (the gradients are in the weights' ``.grad``) before the
    update learns from it. ``clip``, if given, scales the gradients down so that their
    global norm is at most ``clip`` before each step (``torch.nn.utils.clip_grad_norm_``,
    as Wortsman et al. 2023 train; one model only: an ensemble's norm would mix members).
    """
    losses = []
    for step, (*inputs, target) in enumerate(batches):
        output = model(*inputs)
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.sum().backward()  # an ensemble's members: each gets its own loss's gradient
        losses.append(loss.detach())
        if measure is not None:
            measure(step, losses[-1], output, target)
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        if schedule is not None:
            schedule.step()
    return torch.stack(losses).tolist()


def member_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of each member (the leading axis) over its targets.

    ``logits`` (members, ..., classes), ``targets`` (members, ...); targets of -1 are left
    out.
    """
    members, classes = logits.shape[0], logits.shape[-1]
    ce = F.cross_entropy(logits.reshape(-1, classes), targets.reshape(-1), ignore_index=-1,
                         reduction="none").view(members, -1)
    counted = (targets >= 0).view(members, -1)
    return (ce * counted).sum(1) / counted.sum(1)


class Ensemble(nn.Module):
    """Models of one architecture (the members) as one model (see the module docstring).

    ``models``: the members, built and initialised one by one (as separate runs would be).
    ``rates``: each member's learning rate per weight name (``None`` freezes the weight).
    Consecutive members with the same rates form a *run*: a copy of the model whose every
    weight (an ``nn.Parameter``) and buffer holds the run's members stacked on dim 0, so
    that the members may differ in their rates (:meth:`param_groups`) and in their
    buffers (constants such as a logit scale). Inputs and outputs carry a leading member
    axis.
    """

    def __init__(self, models: Sequence[nn.Module], rates: Sequence[dict[str, float | None]]):
        super().__init__()
        starts = [i for i in range(len(models)) if i == 0 or rates[i] != rates[i - 1]]
        self.rates = [rates[i] for i in starts]  # each run's
        self.runs = nn.ModuleList(_stacked(models[start:stop], rates[start])
                                  for start, stop in zip(starts, [*starts[1:], len(models)]))

    def param_groups(self) -> list[dict]:
        """One ``torch.optim`` param group per learning rate (frozen weights left out)."""
        groups: dict[float, list[nn.Parameter]] = {}
        for run, rates in zip(self.runs, self.rates):
            for name, weight in run.named_parameters():
                if rates[name] is not None:
                    groups.setdefault(rates[name], []).append(weight)
        return [{"params": weights, "lr": lr} for lr, weights in groups.items()]

    def state(self) -> dict[str, torch.Tensor]:
        """Every weight and buffer, by the model's own names, the members stacked on dim 0."""
        runs = [{**dict(run.named_parameters()), **dict(run.named_buffers())} for run in self.runs]
        return {name: _joined([run[name] for run in runs]) for name in runs[0]}

    def grads(self, names: Sequence[str]) -> dict[str, torch.Tensor]:
        """The gradients of the weights ``names``, the members stacked on dim 0."""
        return {name: _joined([run.get_parameter(name).grad for run in self.runs])
                for name in names}

    def forward(self, *inputs):
        """Every member's forward pass on its own inputs."""
        return vmap(self._member)(self.state(), *inputs)

    def _member(self, state: dict[str, torch.Tensor], *inputs):
        return functional_call(self.runs[0], state, inputs)  # the model's own forward


def _stacked(models: Sequence[nn.Module], rates: dict[str, float | None]) -> nn.Module:
    """A copy of ``models[0]`` whose weights and buffers hold all ``models``' on dim 0."""
    run = copy.deepcopy(models[0])
    weights, buffers = stack_module_state(list(models))
    for name, tensor in [*weights.items(), *buffers.items()]:
        if name in weights:
            tensor = nn.Parameter(tensor.detach(), requires_grad=rates[name] is not None)
        owner, _, attribute = name.rpartition(".")
        setattr(run.get_submodule(owner), attribute, tensor)
    return run


def _joined(tensors: list[torch.Tensor]) -> torch.Tensor:
    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)
