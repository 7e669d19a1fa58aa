"""Training on ``torch.optim``: the plain loop of every run, and many runs as one computation.

Every training run on the site is :func:`train`, the usual loop (as in nanoGPT's
``train.py``): for each batch, the loss, ``optimizer.zero_grad()``, ``loss.backward()``,
``optimizer.step()``. The experiments run many such runs at once (below); a run alone
reads::

    def loss_fn(model, batch):
        query, pairs, target = batch
        return F.cross_entropy(model(query, pairs).logits, target)

    optimizer = make_optimizer("adam", [{"params": model.parameters(), "lr": 1e-2}])
    losses = train(model, optimizer, batches, loss_fn)

The site's experiments compare many runs (scale rules x learning rates x seeds) that
differ only in their numbers, not in their code. :class:`Ensemble` trains them as one
computation: it stacks the members' weights along a new first axis and runs the model's
own ``forward`` on every member with ``torch.func.vmap`` and ``functional_call``. The
loss is the sum of the members' losses, so each member gets exactly the gradient of its
own loss. Each weight is one tensor with the members stacked, which the forward pass
reads; the optimiser updates slices of it in place (a run of consecutive members at one
learning rate is one slice, and each learning rate is one param group of an ordinary
``torch.optim`` optimiser), each slice taking its part of the gradient after the backward
pass. Adam and SGD update every number on its own, so each member follows the run
:func:`train` would give it alone: ``tests/test_library.py`` trains members one by one
with :func:`train` and checks that the ensemble gives the same losses (and, for the
recall models, the same weights).

Cost on a CPU: the site's models are tiny, so each operation's fixed overhead, not its
arithmetic, dominates. One ensemble per experiment (rather than one per arm or per run)
keeps the number of operations, and with it the build time, small; arms that differ
only in a constant (a buffer, such as the GPT's logit scale) share one ensemble.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap


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


class Ensemble:
    """Models of one architecture, stacked and run as one (see the module docstring).

    ``models``: the members, built and initialised one by one (as a separate run would
    be); their buffers (constants such as a logit scale) are stacked too, so members may
    differ in them. ``lrs``: for each member, its learning rate per parameter name;
    ``None`` freezes that parameter. Inputs of :meth:`__call__` carry a leading member axis.
    ``blocks``: the sizes of consecutive blocks of members that different optimisers train
    (default: one block); :meth:`param_groups` gives the groups of the blocks one optimiser
    trains.
    """

    def __init__(self, models: Sequence[nn.Module], lrs: Sequence[dict[str, float | None]],
                 device: torch.device | str = "cpu", blocks: Sequence[int] | None = None):
        self.size = len(models)
        self.template = copy.deepcopy(models[0]).to(device)
        self.names = [name for name, _ in models[0].named_parameters()]
        block_of = [b for b, size in enumerate(blocks or [self.size]) for _ in range(size)]
        if len(block_of) != self.size:
            raise ValueError(f"blocks {blocks} do not add up to {self.size} members")
        # name -> every member's weight stacked on dim 0: the one tensor the forward pass
        # reads and the backward pass gives a gradient to
        self.weights: dict[str, torch.Tensor] = {}
        # name -> [(lr, block, slice of the stacked weight: a run of consecutive members of
        # one block at that lr)]: what the optimisers update in place
        self.groups: dict[str, list[tuple[float | None, int, torch.Tensor]]] = {}
        for name in self.names:
            runs: list[tuple[float | None, int, list[int]]] = []
            for i, rates in enumerate(lrs):
                if runs and runs[-1][:2] == (rates[name], block_of[i]):
                    runs[-1][2].append(i)
                else:
                    runs.append((rates[name], block_of[i], [i]))
            stacked = torch.stack([m.get_parameter(name).detach() for m in models]).to(device)
            self.groups[name] = [(lr, block, stacked[members[0]:members[-1] + 1])
                                 for lr, block, members in runs]
            self.weights[name] = stacked.detach()  # shares the slices' numbers
            if any(lr is not None for lr, _, _ in runs):
                self.weights[name].requires_grad_()
                self.weights[name].register_post_accumulate_grad_hook(
                    self._hand_out_grad(self.groups[name]))
        self.buffers = {name: torch.stack([m.get_buffer(name) for m in models]).to(device)
                        for name, _ in models[0].named_buffers()}

    @staticmethod
    def _hand_out_grad(groups: list[tuple[float | None, int, torch.Tensor]]
                       ) -> Callable[[torch.Tensor], None]:
        """After a backward pass, each trained slice of a stacked weight takes its part of
        the gradient (an optimiser's ``zero_grad`` forgets it, as for any parameter)."""
        sizes = [len(piece) for _, _, piece in groups]

        def hook(stacked: torch.Tensor) -> None:
            grad, stacked.grad = stacked.grad, None
            for (lr, _, piece), part in zip(groups, grad.split(sizes)):
                if lr is not None:
                    piece.grad = part
        return hook

    def param_groups(self, blocks: Collection[int] = (0,)) -> list[dict]:
        """One ``torch.optim`` param group per learning rate of the members of ``blocks``
        (frozen weights left out)."""
        by_lr: dict[float, list[torch.Tensor]] = {}
        for groups in self.groups.values():
            for lr, b, weights in groups:
                if lr is not None and b in blocks:
                    by_lr.setdefault(lr, []).append(weights)
        return [{"params": weights, "lr": lr} for lr, weights in by_lr.items()]

    def parameters(self) -> dict[str, torch.Tensor]:
        """Every weight with the members stacked on dim 0, in member order."""
        return dict(self.weights)

    def grads(self, names: Sequence[str] | None = None) -> dict[str, torch.Tensor]:
        """The gradient of every trained weight (or of those ``names``), members on dim 0
        (zeros where frozen)."""
        def grad(w: torch.Tensor) -> torch.Tensor:
            return torch.zeros_like(w) if w.grad is None else w.grad

        def stacked(name: str) -> torch.Tensor:
            pieces = [grad(weights) for _, _, weights in self.groups[name]]
            return pieces[0] if len(pieces) == 1 else torch.cat(pieces)
        return {name: stacked(name) for name in names or self.names}

    def zero_grad(self) -> None:
        """Forget every gradient (an optimiser's ``zero_grad`` does it for trained weights)."""
        for groups in self.groups.values():
            for _, _, weights in groups:
                weights.grad = None

    def state(self) -> dict[str, torch.Tensor]:
        """Every weight and buffer with the members stacked on dim 0."""
        return {**self.parameters(), **self.buffers}

    def _forward(self, state: dict[str, torch.Tensor], *inputs):
        return functional_call(self.template, state, inputs)

    def __call__(self, *inputs):
        """Every member's forward pass on its own inputs (each with a leading member axis)."""
        return vmap(self._forward)(self.state(), *inputs)
