"""Training on ``torch.optim``: the plain loop, and the same loop for many runs at once.

:func:`train` is the usual loop (as in nanoGPT's ``train.py``) for one model: for each
batch, the loss, ``optimizer.zero_grad()``, ``loss.backward()``, ``optimizer.step()``::

    def loss_fn(model, batch):
        query, pairs, target = batch
        return F.cross_entropy(model(query, pairs).logits, target)

    optimizer = make_optimizer("adam", [{"params": model.parameters(), "lr": 1e-2}])
    losses = train(model, optimizer, batches, loss_fn)

Every training number on the site comes from :func:`train_members`: the same loop, line for
line (forward, loss, ``zero_grad``, ``backward``, ``step``), run for many *members* at once.
The site's experiments compare many runs (scale rules x learning rates x seeds) that differ
only in their numbers, not in their code, and on a CPU the tiny models' runs cost mostly the
fixed overhead of each operation; so :class:`Members` stacks the members' weights along a new
first axis, with ``torch.func.stack_module_state``, and runs the model's own ``forward`` on
every member with ``torch.func.vmap`` and ``functional_call``, as PyTorch's model-ensembling
tutorial does. The loss is the sum of the members' losses, so each member gets exactly the
gradient of its own loss. Members that train at the same rates form one *run* whose stacked
weights are leaf tensors of their own, in an ordinary param group, so an ordinary
``torch.optim`` optimiser updates them. Adam and SGD update every number on its own, so each
member follows the run :func:`train` would give it alone: ``tests/test_library.py`` trains
members one by one with :func:`train` and checks that :func:`train_members` gives the same
losses (and, for the recall models, the same weights).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

#: The training loops of this module: a snippet whose library code reaches one links to it
#: (the Code pages' "the loop that trained it").
__loops__ = ("train_members",)

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


def train(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Iterable,
          loss_fn: Callable[[nn.Module, Any], torch.Tensor],
          schedule: torch.optim.lr_scheduler.LRScheduler | None = None) -> list[float]:
    """Train ``model`` on each batch of ``batches`` in turn; return the loss of each step.

    ``loss_fn(model, batch)`` runs the forward pass and returns the loss (a scalar).
    ``schedule``, if any, moves the learning rate after every step.
    """
    losses = []
    for batch in batches:
        loss = loss_fn(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if schedule is not None:
            schedule.step()
        losses.append(loss.item())
    return losses


def member_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy of each member (the leading axis) over its targets.

    ``logits`` (members, ..., classes), ``targets`` (members, ...); targets of -1 are left
    out. Summed over members, each member's gradient is its own loss's.
    """
    members, classes = logits.shape[0], logits.shape[-1]
    ce = F.cross_entropy(logits.reshape(-1, classes), targets.reshape(-1), ignore_index=-1,
                         reduction="none").view(members, -1)
    counted = (targets >= 0).view(members, -1)
    return (ce * counted).sum(1) / counted.sum(1)


def train_members(members: Members, optimizers: Sequence[torch.optim.Optimizer],
                  batches: Iterable[tuple[tuple[torch.Tensor, ...], torch.Tensor]],
                  loss_fn: Callable[[Any, torch.Tensor], torch.Tensor], *,
                  schedules: Sequence[torch.optim.lr_scheduler.LRScheduler] = (),
                  measure: Callable[[int, torch.Tensor, Any, torch.Tensor], None] | None = None,
                  steps: int | None = None) -> None:
    """:func:`train` for every member of ``members`` at once: the loop every training
    number on the site comes from.

    Each batch is ``(inputs, targets)`` with a leading member axis (members of one seed
    share their data). ``loss_fn(outputs, targets)`` gives each member's loss, shape
    (members,). ``measure(t, losses, outputs, targets)``, if given, reads batch ``t``'s
    forward and backward pass (``members.grads()`` holds the gradients) before the step
    learns from it. With ``steps``, batch ``steps`` is measured and not learned from: a
    record after the last update.
    """
    for t, (inputs, targets) in enumerate(batches):
        outputs = members(*inputs)  # forward: every member on its own inputs
        losses = loss_fn(outputs, targets)  # (members,)
        for optimizer in optimizers:
            optimizer.zero_grad()
        losses.sum().backward()  # members are independent: each gets its own loss's gradient
        if measure is not None:
            with torch.no_grad():
                measure(t, losses.detach(), outputs, targets)
        if t == steps:
            break
        for optimizer in optimizers:
            optimizer.step()
        for schedule in schedules:
            schedule.step()


class Members:
    """Models of one architecture, stacked and run as one (see the module docstring).

    ``models``: the members, built and initialised one by one (as a separate run would
    be); their buffers (constants such as a logit scale) are stacked too, so members may
    differ in them. ``rates``: for each member, its learning rate per parameter name;
    ``None`` freezes that parameter. Consecutive members with the same rates (and block)
    form one run, whose weights ``torch.func.stack_module_state`` stacks into leaf tensors.
    Inputs of :meth:`__call__` carry a leading member axis. ``blocks``: the sizes of
    consecutive blocks of members that different optimisers train (default: one block);
    :meth:`param_groups` gives the groups of the blocks one optimiser trains.
    """

    def __init__(self, models: Sequence[nn.Module], rates: Sequence[dict[str, float | None]],
                 device: torch.device | str = "cpu", blocks: Sequence[int] | None = None):
        self.size = len(models)
        self.template = copy.deepcopy(models[0]).to(device)
        self.names = [name for name, _ in models[0].named_parameters()]
        block_of = [b for b, size in enumerate(blocks or [self.size]) for _ in range(size)]
        if len(block_of) != self.size:
            raise ValueError(f"blocks {blocks} do not add up to {self.size} members")
        starts = [i for i in range(self.size)
                  if i == 0 or (rates[i], block_of[i]) != (rates[i - 1], block_of[i - 1])]
        #: [(rates, block, name -> the run's stacked weights, leaves on the device)]
        self.runs: list[tuple[dict[str, float | None], int, dict[str, torch.Tensor]]] = []
        for start, stop in zip(starts, [*starts[1:], self.size]):
            stacked, _ = stack_module_state(list(models[start:stop]))
            weights = {name: w.detach().to(device).requires_grad_(rates[start][name] is not None)
                       for name, w in stacked.items()}
            self.runs.append((rates[start], block_of[start], weights))
        self.buffers = {name: torch.stack([m.get_buffer(name) for m in models]).to(device)
                        for name, _ in models[0].named_buffers()}

    def param_groups(self, blocks: Collection[int] = (0,)) -> list[dict]:
        """One ``torch.optim`` param group per learning rate of the members of ``blocks``
        (frozen weights left out)."""
        by_lr: dict[float, list[torch.Tensor]] = {}
        for rates, block, weights in self.runs:
            for name, weight in weights.items():
                if rates[name] is not None and block in blocks:
                    by_lr.setdefault(rates[name], []).append(weight)
        return [{"params": weights, "lr": lr} for lr, weights in by_lr.items()]

    def _joined(self, pick: Callable[[torch.Tensor], torch.Tensor],
                names: Sequence[str]) -> dict[str, torch.Tensor]:
        pieces = {name: [pick(weights[name]) for _, _, weights in self.runs] for name in names}
        return {name: p[0] if len(p) == 1 else torch.cat(p) for name, p in pieces.items()}

    def parameters(self) -> dict[str, torch.Tensor]:
        """Every weight with the members stacked on dim 0, in member order."""
        return self._joined(lambda w: w, self.names)

    def grads(self, names: Sequence[str] | None = None) -> dict[str, torch.Tensor]:
        """The gradient of every weight (or of those ``names``), members on dim 0 (zeros
        where frozen)."""
        return self._joined(lambda w: torch.zeros_like(w) if w.grad is None else w.grad,
                            names or self.names)

    def zero_grad(self) -> None:
        """Forget every gradient (what an optimiser's ``zero_grad`` does for its weights)."""
        for _, _, weights in self.runs:
            for weight in weights.values():
                weight.grad = None

    def state(self) -> dict[str, torch.Tensor]:
        """Every weight and buffer with the members stacked on dim 0."""
        return {**self.parameters(), **self.buffers}

    def _forward(self, state: dict[str, torch.Tensor], *inputs):
        return functional_call(self.template, state, inputs)

    def __call__(self, *inputs):
        """Every member's forward pass on its own inputs (each with a leading member axis)."""
        return vmap(self._forward)(self.state(), *inputs)
