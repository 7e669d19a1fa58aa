"""The GPT engine: learning-rate sweeps of a small GPT, many runs at once, on the copy task
or on real text (CPython's help topics, :func:`sdpa.tasks.text_corpus`).

A :class:`GPTSweep` is a frozen configuration: arms (attention options of one
:class:`sdpa.models.GPT`), peak learning rates and seeds. :func:`run_gpt` trains every
member, memoised by :func:`sdpa.runtime.memo`, and returns a :class:`GPTHistory` whose
fields carry the members' grid (arms, lrs, seeds) as their trailing axes::

    from sdpa.gpt import GPTSweep, run_gpt
    from sdpa.models import GPTConfig

    sweep = GPTSweep(arms=(GPTConfig(), GPTConfig(qk_norm="rms")), lrs=(1e-3, 1e-2))
    history = run_gpt(sweep)
    history.arm(GPTConfig(), lr=1e-2).final_loss   # (seeds,)

Each member is one run of :func:`sdpa.training.train`, the plain loop on ``torch.optim``
with a cosine schedule; the members train together, through that loop, as one
:class:`sdpa.training.Ensemble`, and a test checks that each member gets the losses of its
run alone (:func:`train_member`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from sdpa.attention import Scale
from sdpa.models import GPT, GPTConfig, qk_norm_bound
from sdpa.runtime import device as default_device
from sdpa.runtime import generator, memo, seeded
from sdpa.tasks import copy_batch, text_batch, text_corpus
from sdpa.training import Ensemble, make_optimizer, member_losses, train, warmup_cosine


@dataclass(frozen=True)
class GPTSweep:
    """Arms (attention options of one model) x peak learning rates x seeds, on ``task``:
    ``"copy"`` (:func:`sdpa.tasks.copy_batch`) or ``"text"`` (windows of the help topics;
    the model's ``vocab`` must be the corpus's and the loss is measured on its held-out part).

    Adam without weight decay, the learning rate decaying to zero on a cosine, no warm-up.
    Arms that differ only in their scale rule, with all their learning rates and seeds,
    train as one batched computation; members that share a seed share their data, and
    their initial weights where they share an arm.
    """

    arms: tuple[GPTConfig, ...] = (GPTConfig(),)
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
    seeds: tuple[int, ...] = (0, 1)
    steps: int = 120
    batch: int = 8  # sequences per step and seed
    betas: tuple[float, float] = (0.9, 0.95)
    held_out: int = 128  # sequences of the fixed batch the final loss is measured on
    data_seed: int = 1234
    task: str = "copy"
    evals: int = 1  # the held-out loss is measured at every steps/evals steps (and at 0)

    @property
    def eval_steps(self) -> tuple[int, ...]:
        """The steps before which the held-out loss is measured (the last: after training)."""
        return tuple(round(i * self.steps / self.evals) for i in range(self.evals + 1))

    def parts(self, members: int = 10) -> list[GPTSweep]:
        """The sweep in even parts: each seed alone, its arms in runs of at most ``members``
        members (arms x learning rates). Members are independent and a seed's data does not
        depend on the others, so the parts' histories, joined (:meth:`GPTHistory.joined`),
        are the whole sweep's; a long sweep so comes in pieces that processes sharing the
        store split between them (:func:`sdpa.runtime.each`)."""
        count = math.ceil(len(self.arms) * len(self.lrs) / members)
        size = math.ceil(len(self.arms) / count)  # arms per part, as even as they go
        chunks = [self.arms[i:i + size] for i in range(0, len(self.arms), size)]
        return [dataclasses.replace(self, arms=arms, seeds=(seed,))
                for seed in self.seeds for arms in chunks]


@dataclass(frozen=True)
class GPTRecords:
    """What a sweep recorded; the trailing axes of every field are the members' grid."""

    loss: torch.Tensor  # (steps, ...) training loss before each update
    max_logit: torch.Tensor  # (steps, ...) the largest logit any softmax saw
    max_raw: torch.Tensor  # (steps, ...) the same before the soft cap
    bound: torch.Tensor  # (steps, ...) the QK-norm bound from the gains (NaN without QK-norm)
    entropy: torch.Tensor  # (steps, layers, heads, ...) mean row entropy, nats
    grad_ratio: torch.Tensor  # (steps, layers, ...) |grad W_Q| / |grad W_V| (Frobenius)
    held_out_loss: torch.Tensor  # (evals + 1, ...) on the held-out batch at each eval step
    initial_loss: torch.Tensor  # (...) on the held-out batch before training
    final_loss: torch.Tensor  # (...) on it after training; a diverged run counts 10 ln(vocab)

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> GPTRecords:
        """Apply ``fn`` to every field."""
        fields = dataclasses.fields(self)
        return GPTRecords(**{f.name: fn(getattr(self, f.name)) for f in fields})


@dataclass(frozen=True)
class GPTHistory:
    """A sweep's records: the trailing axes of every field are (arms, lrs, seeds)."""

    sweep: GPTSweep
    records: GPTRecords

    def arm(self, config: GPTConfig, lr: float | None = None) -> GPTRecords:
        """One arm: trailing axes (lrs, seeds), or (seeds,) at the learning rate ``lr``."""
        a = self.sweep.arms.index(config)
        if lr is None:
            return self.records.map(lambda t: t[..., a, :, :])
        i = self.sweep.lrs.index(lr)
        return self.records.map(lambda t: t[..., a, i, :])

    @classmethod
    def joined(cls, sweep: GPTSweep, parts: list[GPTHistory]) -> GPTHistory:
        """The whole sweep's history from its parts' (:meth:`GPTSweep.parts`, in order)."""
        per_seed = len(parts) // len(sweep.seeds)

        def join(field: str) -> torch.Tensor:
            seeds = [torch.cat([getattr(p.records, field) for p in parts[k:k + per_seed]], dim=-3)
                     for k in range(0, len(parts), per_seed)]  # arms, then seeds
            return torch.cat(seeds, dim=-1)

        fields = [f.name for f in dataclasses.fields(GPTRecords)]
        return cls(sweep, GPTRecords(**{f: join(f) for f in fields}))


def gpt_model(config: GPTConfig, seed: int) -> GPT:
    """One member's model as it starts (GPT-2 initialisation from ``seed``)."""
    with seeded(seed):
        return GPT(config)


def _batch(sweep: GPTSweep, config: GPTConfig, n: int, held_out: bool,
           data: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of the sweep's task (held out or for training): inputs, targets."""
    if sweep.task == "copy":
        return copy_batch(n, config.vocab, config.context, data)
    if sweep.task == "text":
        corpus = text_corpus()
        if config.vocab != corpus.vocab:
            raise ValueError(f"the text task needs vocab={corpus.vocab}, not {config.vocab}")
        return text_batch(corpus.valid if held_out else corpus.train, n, config.context, data)
    raise ValueError(f"task must be 'copy' or 'text', not {sweep.task!r}")


def _draws(sweep: GPTSweep, config: GPTConfig) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Each step's batches, one per seed: inputs and targets (seeds, batch, context). A
    seed's data comes from a generator of its own, so it does not depend on which other
    seeds the sweep holds (:meth:`GPTSweep.parts` relies on it)."""
    data = [generator(sweep.data_seed + 7919 * (1 + s)) for s in sweep.seeds]
    for _ in range(sweep.steps):
        batches = [_batch(sweep, config, sweep.batch, False, g) for g in data]
        yield tuple(torch.stack(parts) for parts in zip(*batches))


def gpt_loss(output: tuple[torch.Tensor, list], target: torch.Tensor) -> torch.Tensor:
    """The next-token cross-entropy of one model's output (logits, stats) on its targets
    (-1: none)."""
    return F.cross_entropy(output[0].flatten(0, 1), target.flatten(), ignore_index=-1)


def _member_losses(output: tuple[torch.Tensor, list], target: torch.Tensor) -> torch.Tensor:
    return member_losses(output[0], target)


def train_member(sweep: GPTSweep, config: GPTConfig, lr: float,
                 seed: int) -> tuple[GPT, list[float]]:
    """One member of ``sweep`` trained alone by the plain loop, :func:`sdpa.training.train`:
    the trained model and the loss of each of its steps.

    The ensemble of :func:`run_gpt` computes exactly this for every member at once;
    ``tests/test_library.py`` checks that both give the same losses.
    """
    dev = default_device()
    model = gpt_model(config, seed).to(dev)
    optimizer = make_optimizer("adam", [{"params": model.parameters(), "lr": lr}],
                               betas=sweep.betas)
    s = sweep.seeds.index(seed)
    batches = ((inputs[s].to(dev), targets[s].to(dev)) for inputs, targets in _draws(sweep, config))
    return model, train(model, optimizer, batches, gpt_loss, warmup_cosine(optimizer, sweep.steps))


def _structure(config: GPTConfig) -> GPTConfig:
    """Arms with the same structure differ only in their logit factor (a buffer) and in
    how W_Q and W_K start and learn (``qk_init``, ``qk_lr``)."""
    return dataclasses.replace(config, scale=Scale.INV_SQRT, qk_lr=1.0, qk_init=1.0)


@torch.no_grad()
def _held_out_loss(ensemble: Ensemble, held_out: tuple[torch.Tensor, torch.Tensor],
                   vocab: int) -> torch.Tensor:
    """Each member's loss on the held-out batch (a diverged run's: 10 ln(vocab))."""
    losses = _member_losses(ensemble(held_out[0]), held_out[1])
    return torch.nan_to_num(losses, nan=10 * math.log(vocab))


@torch.no_grad()
def _step_records(config: GPTConfig, ensemble: Ensemble, losses: torch.Tensor,
                  stats: list) -> dict[str, torch.Tensor]:
    """What one step records of every member (the fields of :class:`GPTRecords` that
    have a step axis), from its forward and backward pass."""
    names = [f"blocks.{i}.attn.c_attn.weight" for i in range(config.n_layers)]
    grads, inner = ensemble.grads(names), config.n_heads * config.d_head
    # rows 0:inner of c_attn make q, inner:2 inner k, the rest v
    ratio = torch.stack([grads[name][:, :inner].flatten(1).norm(dim=1)
                         / grads[name][:, 2 * inner:].flatten(1).norm(dim=1) for name in names])
    bound = (qk_norm_bound(config, ensemble.state()) if config.qk_norm
             else torch.full_like(losses, math.nan))
    return dict(loss=losses, bound=bound, grad_ratio=ratio,  # ratio: (layers, members)
                max_logit=torch.stack([s.max_logit for s in stats]).amax(0),
                max_raw=torch.stack([s.max_raw for s in stats]).amax(0),
                entropy=torch.stack([s.entropy.T for s in stats]))  # (layers, heads, members)


@memo(share=True)
def run_gpt(sweep: GPTSweep) -> GPTHistory:
    """Train every arm x learning rate x seed of ``sweep`` by :func:`sdpa.training.train`;
    memoised by the (frozen) sweep.

    Arms of one structure (:func:`_structure`), with all their learning rates and seeds,
    train as one ensemble; the ensembles train one after the other.
    """
    dev, per_arm = default_device(), {}
    for structure in dict.fromkeys(_structure(arm) for arm in sweep.arms):
        arms = tuple(arm for arm in sweep.arms if _structure(arm) == structure)
        members = [(lr, arm, seed) for lr in sweep.lrs for arm in arms for seed in sweep.seeds]
        models = [gpt_model(arm, seed) for _, arm, seed in members]
        names = [name for name, _ in models[0].named_parameters()]
        ensemble = Ensemble(models, [dict.fromkeys(names, lr) for lr, _, _ in members]).to(dev)
        optimizer = make_optimizer("adam", ensemble.param_groups(), betas=sweep.betas)
        seed_of = torch.arange(len(members)) % len(sweep.seeds)  # each member its seed's data
        batches = ((inputs[seed_of].to(dev), targets[seed_of].to(dev))
                   for inputs, targets in _draws(sweep, structure))
        held_out = tuple(x.to(dev).expand(len(members), *x.shape)
                         for x in _batch(sweep, structure, sweep.held_out, True,
                                         generator(sweep.data_seed + 1)))
        held, rows = [_held_out_loss(ensemble, held_out, structure.vocab)], []

        def measure(step: int, losses: torch.Tensor, output: tuple, target: torch.Tensor):
            if step in sweep.eval_steps[1:]:  # the weights before this step's update
                held.append(_held_out_loss(ensemble, held_out, structure.vocab))
            rows.append(_step_records(structure, ensemble, losses, output[1]))

        train(ensemble, optimizer, batches, _member_losses, warmup_cosine(optimizer, sweep.steps),
              measure)
        held.append(_held_out_loss(ensemble, held_out, structure.vocab))
        records = GPTRecords(**{f: torch.stack([row[f] for row in rows]).cpu() for f in rows[0]},
                             held_out_loss=torch.stack(held).cpu(), initial_loss=held[0].cpu(),
                             final_loss=held[-1].cpu())
        # (..., members) -> (..., lrs, arms, seeds)
        records = records.map(lambda t: t.view(*t.shape[:-1], len(sweep.lrs), len(arms), -1))
        per_arm |= {arm: records.map(lambda t: t[..., i, :]) for i, arm in enumerate(arms)}
    fields = [f.name for f in dataclasses.fields(GPTRecords)]
    return GPTHistory(sweep, GPTRecords(**{
        f: torch.stack([getattr(per_arm[arm], f) for arm in sweep.arms], dim=-3) for f in fields}))


def lr_sensitivity(final_loss: torch.Tensor, initial_loss: float) -> float:
    """LR sensitivity (Wortsman et al. 2023): the mean over learning rates of
    min(L(lr), L0) - L*.

    ``final_loss`` holds one final loss per learning rate (averaged over seeds),
    ``initial_loss`` is the loss at initialisation L0 and L* is the best final loss of the
    sweep. Zero means every learning rate did as well as the best one.
    """
    return (final_loss.clamp(max=initial_loss) - final_loss.min()).mean().item()
