"""The site's training experiments: frozen configurations in, typed results out.

An experiment is a frozen dataclass (hashable), and running it is memoised per process
with ``functools.cache``: every snippet that asks for the same configuration shares one
run, in the build and in the test session alike. Results are dataclasses with named
fields; read them by field and by configuration, never by position or display label::

    from sdpa.attention import Scale
    from sdpa.experiments import Arm, RecallExperiment, run_recall

    experiment = RecallExperiment(d_k=64, optimizer="adam", lrs=(3e-3, 1e-2, 3e-2),
                                  arms=(Arm(Scale.NONE), Arm(Scale.INV_SQRT)), seeds=(0, 1, 2))
    history = run_recall(experiment)  # all arms x learning rates x seeds: one computation
    history.metrics.loss.shape        # (records, arms, lrs, seeds)
    history.arm(Arm(Scale.NONE), lr=1e-2).final().loss   # (seeds,) mean of the last records

The recall experiment trains :class:`sdpa.models.RecallHead` (or, with ``heads``, a
:class:`sdpa.models.RecallBlock`) on the associative-recall task of :mod:`sdpa.tasks`; its
members share data and initial weights when they share a seed (a paired comparison), and
differ in their arm and learning rate. Experiments of one shape that differ only in
optimiser, arms, learning rates and seeds can train as one ensemble, each with its own
optimiser (:func:`run_recalls`): the same runs, in fewer and larger computations.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from typing import Literal

import torch
import torch.nn.functional as F

from sdpa.attention import Scale, entropy
from sdpa.models import (GPT, GPTConfig, RecallBlock, RecallHead, RecallOutput,
                         init_unit_variance, qk_norm_bound)
from sdpa.runtime import device as default_device
from sdpa.runtime import generator, memo, seeded
from sdpa.tasks import RecallTask, copy_batch, recall_batches
from sdpa.training import OPTIMIZER_LABELS, Ensemble, make_optimizer, member_losses

Init = Literal["unit", "default"]
Optimizer = Literal["adam", "sgd"]


# ------------------------------------------------------------------ recall: configuration


@dataclass(frozen=True)
class Arm:
    """One variant of the recall head: its logit scale and how W_Q and W_K start and learn.

    scale:          the rule for the logit factor (1, 1/sqrt(d_k) or 1/d_k).
    init:           "unit": weights N(0, 1/fan_in), q and k components of variance 1;
                    "default": ``nn.Linear``'s own, variance about 1/3.
    learn_scale:    learn the factor (as its logarithm) with the weights.
    q_init, k_init: multiply the initial W_Q (W_K) by this constant.
    lr_q, lr_k:     multiply the learning rate of W_Q (W_K) by this constant.
    lr:             multiply every learning rate of the arm (arms of one experiment can
                    then sweep different windows of rates, see :class:`Tuning`).
    """

    scale: Scale = Scale.INV_SQRT
    init: Init = "unit"
    learn_scale: bool = False
    q_init: float = 1.0
    k_init: float = 1.0
    lr_q: float = 1.0
    lr_k: float = 1.0
    lr: float = 1.0


def scale_arms(inits: tuple[Init, ...] = ("unit",),
               rules: tuple[Scale, ...] = tuple(Scale)) -> tuple[Arm, ...]:
    """One fixed-scale arm per (initialisation, scale rule)."""
    return tuple(Arm(rule, init=init) for init in inits for rule in rules)


@dataclass(frozen=True)
class RecallExperiment:
    """Task, model, optimiser and the grid arms x learning rates x seeds, run as one.

    The model is :class:`sdpa.models.RecallHead` (one head), or with ``heads`` set a
    :class:`sdpa.models.RecallBlock` of that many heads of ``d_k`` (then d_model must be
    heads x d_k).
    """

    d_k: int = 64  # also d_v
    d_model: int = 64
    heads: int | None = None
    n_pairs: int = 16  # pairs per sequence: the row length of the attention
    n_keys: int = 32
    n_values: int = 32  # the classes: chance loss is ln n_values
    batch: int = 64
    optimizer: Optimizer = "adam"
    steps: int = 300
    record_every: int = 1
    arms: tuple[Arm, ...] = (Arm(),)
    lrs: tuple[float, ...] = (1e-2,)
    seeds: tuple[int, ...] = (0, 1, 2)

    @property
    def task(self) -> RecallTask:
        return RecallTask(self.n_keys, self.n_values, self.n_pairs, self.batch, self.d_model)

    def members(self) -> list[tuple[Arm, float, int]]:
        """Every (arm, learning rate, seed), in the order of the result's axes."""
        return [(a, lr, s) for a in self.arms for lr in self.lrs for s in self.seeds]


def recall_model(experiment: RecallExperiment, arm: Arm, seed: int) -> RecallHead | RecallBlock:
    """One member's model as it starts: the same draw for every arm of one seed."""
    e, scale = experiment, arm.scale.factor(experiment.d_k)
    with seeded(seed):
        if e.heads is None:
            model = RecallHead(e.d_model, e.d_k, e.n_values, scale, learn_scale=arm.learn_scale)
        elif e.heads * e.d_k != e.d_model:
            raise ValueError(f"a block needs d_model = heads x d_k, not {e.d_model}")
        else:
            model = RecallBlock(e.heads, e.d_k, e.n_values, scale, learn_scale=arm.learn_scale)
        if arm.init == "unit":
            init_unit_variance(model)
    with torch.no_grad():
        model.W_Q.weight.mul_(arm.q_init)
        model.W_K.weight.mul_(arm.k_init)
    return model


#: The weights of :class:`sdpa.models.RecallHead`.
HEAD_WEIGHTS = ("W_Q.weight", "W_K.weight", "W_V.weight", "W_O.weight", "log_scale")


def member_lrs(arm: Arm, lr: float,
               names: Iterable[str] = HEAD_WEIGHTS) -> dict[str, float | None]:
    """The learning rate of each weight ``names`` of one member (None: not trained)."""
    lr = lr * arm.lr
    special = {"W_Q.weight": lr * arm.lr_q, "W_K.weight": lr * arm.lr_k,
               "log_scale": lr if arm.learn_scale else None}
    return {name: special.get(name, lr) for name in names}


# ------------------------------------------------------------------ recall: results


@dataclass(frozen=True)
class RecallMetrics:
    """What is measured on one batch, per member; every field has the same shape."""

    loss: torch.Tensor  # cross-entropy, nats
    accuracy: torch.Tensor
    entropy: torch.Tensor  # the query row's attention entropy, nats (mean over the batch)
    max_weight: torch.Tensor  # the row's largest attention weight (mean over the batch)
    max_logit: torch.Tensor  # the largest |softmax input| in the batch
    logit_var: torch.Tensor  # the variance of the softmax input over the batch
    grad_q: torch.Tensor  # Frobenius norm of the loss gradient on W_Q
    grad_k: torch.Tensor
    grad_v: torch.Tensor
    scale: torch.Tensor  # the logit factor (moves only when learned)

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> RecallMetrics:
        """Apply ``fn`` to every field."""
        fields = dataclasses.fields(self)
        return RecallMetrics(**{f.name: fn(getattr(self, f.name)) for f in fields})

    def record(self, i: int) -> RecallMetrics:
        """Record ``i`` (an index on the first axis; 0 is the initialisation)."""
        return self.map(lambda t: t[i])

    def final(self, last: int = 8) -> RecallMetrics:
        """The mean of the last ``last`` records (the first axis)."""
        return self.map(lambda t: t[-last:].mean(0))


@dataclass(frozen=True)
class RecallHistory:
    """A recall experiment's records: ``metrics`` fields are (records, arms, lrs, seeds).

    Each record is measured on that step's fresh batch before the step's update, so
    record 0 is the initialisation.
    """

    experiment: RecallExperiment
    step: torch.Tensor  # (records,) the step of each record
    metrics: RecallMetrics

    def arm(self, arm: Arm, lr: float | None = None) -> RecallMetrics:
        """One arm at one learning rate (default: the only one): fields (records, seeds)."""
        lrs = self.experiment.lrs
        if lr is None and len(lrs) != 1:
            raise ValueError("this experiment has several learning rates: name one")
        a, i = self.experiment.arms.index(arm), lrs.index(lrs[0] if lr is None else lr)
        return self.metrics.map(lambda t: t[:, a, i])

    def steps_to(self, values: torch.Tensor, threshold: float, below: bool = True) -> torch.Tensor:
        """The first recorded step at which ``values`` (records, ...) crosses ``threshold``.

        ``inf`` where it never does.
        """
        hit = values <= threshold if below else values >= threshold
        steps = self.step.float().view(-1, *[1] * (values.dim() - 1)).expand_as(values)
        return torch.where(hit, steps, torch.full_like(steps, math.inf)).amin(0)


# ------------------------------------------------------------------ recall: the runs


class _RecallRun:
    """The members of experiments of one shape as one ensemble, with their data, on the
    device; each experiment's members are one block of the ensemble (its own optimiser)."""

    def __init__(self, experiments: tuple[RecallExperiment, ...], n_batches: int):
        shapes = {dataclasses.replace(e, optimizer="adam", arms=(), lrs=(), seeds=())
                  for e in experiments}
        if len(shapes) != 1:
            raise ValueError("experiments trained together differ in more than their optimiser, "
                             "arms, learning rates and seeds")
        self.experiments = experiments
        self.device = default_device()
        members = [(e, arm, lr, seed) for e in experiments for arm, lr, seed in e.members()]
        self.models = [recall_model(e, arm, seed) for e, arm, _, seed in members]
        names = [name for name, _ in self.models[0].named_parameters()]
        lrs = [member_lrs(arm, lr, names) for _, arm, lr, _ in members]
        self.blocks = [len(e.members()) for e in experiments]
        self.ensemble = Ensemble(self.models, lrs, self.device, self.blocks)
        seeds = list(dict.fromkeys(s for e in experiments for s in e.seeds))
        data = [recall_batches(experiments[0].task, s, n_batches).to(self.device) for s in seeds]
        tokens = [d.tokens() for d in data]
        # (seeds, batches, batch, ...): every batch of every seed, embedded once
        self.query = torch.stack([q for q, _ in tokens])
        self.pairs = torch.stack([p for _, p in tokens])
        self.target = torch.stack([d.target for d in data])
        self.seed_of = torch.tensor([seeds.index(s) for *_, s in members], device=self.device)

    def batch(self, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Batch ``t`` of every member (members of one seed share it)."""
        s = self.seed_of
        return self.query[s, t], self.pairs[s, t], self.target[s, t]

    def forward_backward(self, t: int) -> tuple[torch.Tensor, RecallOutput, torch.Tensor]:
        """Forward and backward on batch ``t``: the member losses, outputs and targets."""
        query, pairs, target = self.batch(t)
        out = self.ensemble(query, pairs)
        losses = member_losses(out.logits, target)
        losses.sum().backward()  # members are independent: each gets its own loss's gradient
        return losses, out, target

    def measure(self, losses: torch.Tensor, out: RecallOutput,
                target: torch.Tensor) -> RecallMetrics:
        """Every metric of every member, from one step's forward and backward pass."""
        grads, params = self.ensemble.grads(), self.ensemble.parameters()
        scores = out.scores.detach()
        return RecallMetrics(
            loss=losses.detach(),
            accuracy=(out.logits.argmax(-1) == target).float().mean(1),
            entropy=entropy(out.attention.detach()).flatten(1).mean(1),  # (and over heads)
            max_weight=out.attention.detach().amax(-1).flatten(1).mean(1),
            max_logit=scores.abs().flatten(1).amax(1),
            logit_var=scores.flatten(1).var(1),
            grad_q=grads["W_Q.weight"].flatten(1).norm(dim=1),
            grad_k=grads["W_K.weight"].flatten(1).norm(dim=1),
            grad_v=grads["W_V.weight"].flatten(1).norm(dim=1),
            scale=params["log_scale"].detach().exp(),
        )

    def shaped(self, records: list[RecallMetrics]) -> list[RecallMetrics]:
        """Stack records into CPU tensors (records, arms, lrs, seeds), one per experiment."""
        fields = [f.name for f in dataclasses.fields(RecallMetrics)]
        whole = {f: torch.stack([getattr(r, f) for r in records]).cpu() for f in fields}
        out = []
        for e, part in zip(self.experiments, zip(*[whole[f].split(self.blocks, 1)
                                                   for f in fields])):
            grid = (len(records), len(e.arms), len(e.lrs), len(e.seeds))
            out.append(RecallMetrics(**{f: t.reshape(grid) for f, t in zip(fields, part)}))
        return out


@memo
def run_recall(experiment: RecallExperiment) -> RecallHistory:
    """Train every member of ``experiment`` together; memoised by the (frozen) config."""
    return run_recalls((experiment,))[0]


@memo
def run_recalls(experiments: tuple[RecallExperiment, ...]) -> tuple[RecallHistory, ...]:
    """Train experiments that differ only in optimiser, arms, learning rates and seeds as
    one ensemble, each with its own optimiser (fewer, larger computations: faster on a
    CPU). Members are independent, so each history is :func:`run_recall`'s; memoised."""
    first = experiments[0]
    run = _RecallRun(experiments, first.steps + 1)
    optimizers = [make_optimizer(e.optimizer, run.ensemble.param_groups(block))
                  for block, e in enumerate(experiments)]
    records, steps = [], []
    for t in range(first.steps + 1):
        run.ensemble.zero_grad()
        losses, out, target = run.forward_backward(t)
        if t % first.record_every == 0 or t == first.steps:
            with torch.no_grad():
                records.append(run.measure(losses, out, target))
            steps.append(t)
        if t < first.steps:
            for optimizer in optimizers:
                optimizer.step()
    return tuple(RecallHistory(e, torch.tensor(steps), metrics)
                 for e, metrics in zip(experiments, run.shaped(records)))


@memo
def recall_at_init(experiment: RecallExperiment, n_batches: int = 8) -> RecallHistory:
    """Every metric at initialisation, averaged over ``n_batches`` fresh batches.

    One record (step 0); nothing is trained.
    """
    run = _RecallRun((experiment,), n_batches)
    records = []
    for t in range(n_batches):
        run.ensemble.zero_grad()
        losses, out, target = run.forward_backward(t)
        with torch.no_grad():
            records.append(run.measure(losses, out, target))
    mean = run.shaped(records)[0].map(lambda t: t.mean(0, keepdim=True))
    return RecallHistory(experiment, torch.tensor([0]), mean)


def query_grad_per_example(experiment: RecallExperiment,
                           n_batches: int = 4) -> dict[Arm, torch.Tensor]:
    """The norm of each example's loss gradient with respect to its query vector q, at init.

    Per arm, a tensor (seeds, n_batches * batch). W_Q's gradient is the sum over examples
    of ``x_query^T dL/dq``, so this shows which examples carry it. Each member's model
    runs alone here (at the experiment's first learning rate: at step 0 it plays no part).
    """
    task, dev = experiment.task, default_device()
    out = {}
    for arm in experiment.arms:
        per_seed = []
        for seed in experiment.seeds:
            model = recall_model(experiment, arm, seed).to(dev)
            data = recall_batches(task, seed, n_batches).to(dev)
            norms = []
            for t in range(n_batches):
                query, pairs = data.tokens(t)
                q = model.W_Q(query).detach().requires_grad_()
                logits = model.attend(q, pairs).logits
                F.cross_entropy(logits, data.target[t], reduction="sum").backward()
                norms.append(q.grad.norm(dim=-1))  # example b's loss reaches only q_b
            per_seed.append(torch.cat(norms).cpu())
        out[arm] = torch.stack(per_seed)
    return out


# ------------------------------------------------------------------ GPT: learning-rate sweeps


@dataclass(frozen=True)
class GPTSweep:
    """Arms (attention options of one model) x peak learning rates x seeds on the copy task.

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


@dataclass(frozen=True)
class GPTRecords:
    """What a sweep recorded; the trailing axes of every field are the members' grid."""

    loss: torch.Tensor  # (steps, ...) training loss before each update
    max_logit: torch.Tensor  # (steps, ...) the largest logit any softmax saw
    max_raw: torch.Tensor  # (steps, ...) the same before the soft cap
    bound: torch.Tensor  # (steps, ...) the QK-norm bound from the gains (NaN without QK-norm)
    entropy: torch.Tensor  # (steps, layers, heads, ...) mean row entropy, nats
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


def gpt_model(config: GPTConfig, seed: int) -> GPT:
    """One member's model as it starts (GPT-2 initialisation from ``seed``)."""
    with seeded(seed):
        return GPT(config)


def _structure(config: GPTConfig) -> GPTConfig:
    """Arms with the same structure differ only in their scale rule (a buffer)."""
    return dataclasses.replace(config, scale=Scale.INV_SQRT)


@memo
def _run_gpt_group(sweep: GPTSweep) -> GPTRecords:
    """Every arm x learning rate x seed of ``sweep`` as one ensemble; the arms must share
    their structure. Returns records whose trailing axes are (arms, lrs, seeds)."""
    dev = default_device()
    config = sweep.arms[0]
    grid = (len(sweep.lrs), len(sweep.arms), len(sweep.seeds))  # member order: lr, arm, seed
    members = [(lr, arm, seed) for lr in sweep.lrs for arm in sweep.arms for seed in sweep.seeds]
    models = [gpt_model(arm, seed) for _, arm, seed in members]
    names = [name for name, _ in models[0].named_parameters()]
    ensemble = Ensemble(models, [dict.fromkeys(names, lr) for lr, _, _ in members], dev)
    optimizer = make_optimizer("adam", ensemble.param_groups(), betas=sweep.betas)
    cosine = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: 0.5 * (1 + math.cos(math.pi * t / sweep.steps)))
    n_seeds, size = len(sweep.seeds), len(members)
    seed_of = torch.arange(size) % n_seeds
    data = generator(sweep.data_seed)
    held_out = copy_batch(sweep.held_out, config.vocab, config.context,
                          generator(sweep.data_seed + 1))
    held_in, held_target = (x.to(dev).expand(size, *x.shape) for x in held_out)

    def evaluate() -> torch.Tensor:
        with torch.no_grad():
            losses = member_losses(ensemble(held_in)[0], held_target)
        return torch.nan_to_num(losses, nan=10 * math.log(config.vocab))

    initial = evaluate()
    rows = []
    for _ in range(sweep.steps):
        inputs, targets = copy_batch(n_seeds * sweep.batch, config.vocab, config.context, data)
        inputs = inputs.view(n_seeds, sweep.batch, -1)[seed_of].to(dev)  # one batch per seed
        targets = targets.view(n_seeds, sweep.batch, -1)[seed_of].to(dev)
        with torch.no_grad():
            bound = (qk_norm_bound(config, ensemble.state()) if config.qk_norm
                     else torch.full((size,), math.nan, device=dev))
        logits, stats = ensemble(inputs)
        losses = member_losses(logits, targets)
        optimizer.zero_grad()
        losses.sum().backward()
        optimizer.step()
        cosine.step()
        rows.append(GPTRecords(
            loss=losses.detach(), bound=bound,
            max_logit=torch.stack([s.max_logit for s in stats]).amax(0),
            max_raw=torch.stack([s.max_raw for s in stats]).amax(0),
            entropy=torch.stack([s.entropy.T for s in stats]),  # (layers, heads, members)
            initial_loss=initial, final_loss=initial,
        ))
    fields = ("loss", "max_logit", "max_raw", "bound", "entropy")
    stacked = {f: torch.stack([getattr(r, f) for r in rows]).cpu() for f in fields}
    records = GPTRecords(**stacked, initial_loss=initial.cpu(), final_loss=evaluate().cpu())
    # (..., members) -> (..., lrs, arms, seeds) -> (..., arms, lrs, seeds)
    return records.map(lambda t: t.view(*t.shape[:-1], *grid).transpose(-3, -2))


@memo
def run_gpt(sweep: GPTSweep) -> GPTHistory:
    """Train every arm x learning rate x seed of ``sweep``; memoised by the (frozen) sweep.

    Arms that differ only in their scale rule train as one batched computation (memoised
    on its own, so sweeps that share such a group, learning rates and seeds train it once).
    """
    groups = list(dict.fromkeys(_structure(arm) for arm in sweep.arms))
    per_group = {}
    for group in groups:
        arms = tuple(arm for arm in sweep.arms if _structure(arm) == group)
        per_group[group] = (arms, _run_gpt_group(dataclasses.replace(sweep, arms=arms)))

    def arm_records(arm: GPTConfig) -> GPTRecords:
        arms, records = per_group[_structure(arm)]
        return records.map(lambda t: t[..., arms.index(arm), :, :])

    per_arm = [arm_records(arm) for arm in sweep.arms]
    fields = [f.name for f in dataclasses.fields(GPTRecords)]
    stacked = {f: torch.stack([getattr(r, f) for r in per_arm], dim=-3) for f in fields}
    return GPTHistory(sweep, GPTRecords(**stacked))


def lr_sensitivity(final_loss: torch.Tensor, initial_loss: float) -> float:
    """LR sensitivity (Wortsman et al. 2023): the mean over learning rates of
    min(L(lr), L0) - L*.

    ``final_loss`` holds one final loss per learning rate (averaged over seeds),
    ``initial_loss`` is the loss at initialisation L0 and L* is the best final loss of the
    sweep. Zero means every learning rate did as well as the best one.
    """
    return (final_loss.clamp(max=initial_loss) - final_loss.min()).mean().item()


# ------------------------------------------------------------------ the pages' experiments


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
def run_ablation(ablation: Ablation = Ablation()) -> dict[tuple[Optimizer, int], RecallHistory]:
    """Every experiment of ``ablation``, keyed by (optimiser, d_k); the optimisers of one
    d_k train as one ensemble."""
    runs = {}
    for d_k in ablation.d_ks:
        experiments = tuple(ablation.experiment(opt, lr, d_k) for opt, lr in ablation.optimizers)
        runs |= {(e.optimizer, d_k): h for e, h in zip(experiments, run_recalls(experiments))}
    return {(opt, d_k): runs[(opt, d_k)] for opt, _ in ablation.optimizers for d_k in ablation.d_ks}


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


#: The colour of each scale rule in every figure of the site.
SCALE_COLORS = {Scale.NONE: 3, Scale.INV_SQRT: 0, Scale.INV: 2}  # indices into sdpa.PALETTE


def draw_ablation(axes, runs: dict[tuple[Optimizer, int], RecallHistory], metric: str,
                  ylabel: str, reference: tuple[float, str] | None = None) -> None:
    """Plot ``metric`` of :func:`run_ablation` on a grid (rows: optimisers, columns: d_k).

    Unit init: mean line and min-max band over seeds; default init: dashed mean.
    ``reference`` is an optional (y, label) dotted line, e.g. chance. One legend for the
    whole figure goes below the panels.
    """
    from sdpa.figures import INK, PALETTE

    optimizers = list(dict.fromkeys(opt for opt, _ in runs))
    d_ks = sorted({d_k for _, d_k in runs})
    for row, opt in zip(axes, optimizers):
        for ax, d_k in zip(row, d_ks):
            history = runs[(opt, d_k)]
            steps = history.step.tolist()
            for arm in history.experiment.arms:
                values = getattr(history.arm(arm), metric)  # (records, seeds)
                color, name = PALETTE[SCALE_COLORS[arm.scale]], arm.scale.label
                if arm.init == "unit":
                    ax.plot(steps, values.mean(1).tolist(), color=color, label=f"{name}, unit init")
                    ax.fill_between(steps, values.amin(1).tolist(), values.amax(1).tolist(),
                                    color=color, alpha=0.22, lw=0)
                else:
                    ax.plot(steps, values.mean(1).tolist(), "--", color=color, lw=1,
                            label=f"{name}, default init")
            if reference is not None:
                ax.axhline(reference[0], color=INK, ls=":", lw=1, label=reference[1])
    label_grid(axes, optimizers, d_ks, "step", ylabel,
               lambda opt, d_k: f"lr {runs[(opt, d_k)].experiment.lrs[0]:g}")


def label_grid(axes, optimizers: list[Optimizer], d_ks: list[int], xlabel: str, ylabel: str,
               note: Callable[[Optimizer, int], str] | None = None) -> None:
    """Name the panels of a grid (rows: ``optimizers``, columns: ``d_ks``): each title gives
    its optimiser, ``note(optimizer, d_k)`` if any, and d_k; the bottom row carries the x
    label and the left column the y label; one legend for the whole figure goes below."""
    for row, opt in zip(axes, optimizers):
        for ax, d_k in zip(row, d_ks):
            extra = f"{note(opt, d_k)}, " if note else ""
            ax.set_title(f"{OPTIMIZER_LABELS[opt]}, {extra}d_k = {d_k}")
            if opt == optimizers[-1]:
                ax.set_xlabel(xlabel)
            if d_k == d_ks[0]:
                ax.set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][0].figure.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=7.5)


#: The QK-norm page's arms and its sweep: every arm, five learning rates, two seeds.
QK_NORM_ARMS: dict[str, GPTConfig] = {
    "scaled": GPTConfig(),
    "unscaled": GPTConfig(scale=Scale.NONE),
    "qk_norm": GPTConfig(qk_norm="rms"),
    "qk_norm_unscaled": GPTConfig(qk_norm="rms", scale=Scale.NONE),
    "softcap": GPTConfig(softcap=10.0),
}
QK_NORM_SWEEP = GPTSweep(arms=tuple(QK_NORM_ARMS.values()))


# ------------------------------------------------------------------ tuned comparisons


def predicted_lr_exponent(optimizer: Optimizer, rule: Scale) -> float:
    """How the best learning rate of ``rule`` should move with d_k, relative to 1/sqrt(d_k).

    A rule's factor is c = d_k^a times 1/sqrt(d_k) (a = 1/2 for none, -1/2 for 1/d_k).
    Multiplying the logits by c is the same as multiplying W_Q and W_K's initialisation by
    sqrt(c) and their learning rate by sqrt(c) under Adam, by c under SGD. If only W_Q and
    W_K's rate mattered (and the initialisation did not), the best rate of the rule would
    be 1/sqrt(d_k)'s divided by that: the exponent returned here is -a/2 (Adam) or -a (SGD).
    """
    a = {Scale.NONE: 0.5, Scale.INV_SQRT: 0.0, Scale.INV: -0.5}[rule]
    return -a / 2 if optimizer == "adam" else -a


@dataclass(frozen=True)
class Tuning:
    """The scale rules on the recall task, each at its own best learning rate.

    For every (optimiser, d_k), each rule sweeps a window of ``points`` learning rates
    spaced by 10^(1/per_decade) around its centre (the same at every d_k) on
    ``sweep_seeds``; the rate with the lowest mean final loss is its best, and is rerun on
    ``confirm_seeds``, seeds the choice never saw. Every window holds the failure-modes
    ablation's fixed rate, so the sweep's own runs there are the fixed-rate comparison.
    Everything else but ``steps`` is the ablation's setup. All rules and optimisers of one
    d_k and stage train as one ensemble.
    With ``heads`` set, the model is a :class:`sdpa.models.RecallBlock` of that many heads
    of d_k (d_model = heads x d_k).
    """

    ablation: Ablation = Ablation()
    steps: int = 150
    heads: int | None = None
    d_ks: tuple[int, ...] = (16, 64, 256)
    optimizers: tuple[Optimizer, ...] = ("adam", "sgd")
    rules: tuple[Scale, ...] = tuple(Scale)
    per_decade: int = 3
    points: int = 5
    #: (optimiser, rule, k): the window's centre is 10^(k / per_decade)
    centres: tuple[tuple[Optimizer, Scale, int], ...] = (
        ("adam", Scale.NONE, -7), ("adam", Scale.INV_SQRT, -7), ("adam", Scale.INV, -6),
        ("sgd", Scale.NONE, -2), ("sgd", Scale.INV_SQRT, -1), ("sgd", Scale.INV, 0),
    )
    sweep_seeds: tuple[int, ...] = (0, 1)
    confirm_seeds: tuple[int, ...] = (2, 3, 4, 5, 6)
    last: int = 8  # the final loss is the mean of the last `last` records

    def arm(self, optimizer: Optimizer, rule: Scale) -> Arm:
        """The rule's sweep arm: its learning rates are the window's offsets times its centre."""
        (k,) = [k for o, r, k in self.centres if (o, r) == (optimizer, rule)]
        return Arm(rule, lr=10 ** (k / self.per_decade))

    @property
    def offsets(self) -> tuple[float, ...]:
        half = self.points // 2
        return tuple(10 ** (j / self.per_decade) for j in range(-half, self.points - half))

    def window(self, optimizer: Optimizer, rule: Scale) -> tuple[float, ...]:
        """The learning rates the rule sweeps (as the members train with them)."""
        return tuple(self.arm(optimizer, rule).lr * offset for offset in self.offsets)

    def _experiment(self, optimizer: Optimizer, d_k: int, **fields) -> RecallExperiment:
        base = dataclasses.replace(self.ablation.experiment(optimizer, 1.0, d_k),
                                   steps=self.steps)
        if self.heads is not None:
            fields |= {"heads": self.heads, "d_model": self.heads * d_k}
        return dataclasses.replace(base, **fields)

    def sweep(self, optimizer: Optimizer, d_k: int) -> RecallExperiment:
        return self._experiment(optimizer, d_k, lrs=self.offsets, seeds=self.sweep_seeds,
                                arms=tuple(self.arm(optimizer, r) for r in self.rules))

    def confirmation(self, optimizer: Optimizer, d_k: int,
                     best: tuple[float, ...]) -> RecallExperiment:
        """Every rule at its best rate (``best``, in the order of ``rules``), fresh seeds."""
        arms = tuple(Arm(rule, lr=lr) for rule, lr in zip(self.rules, best))
        return self._experiment(optimizer, d_k, lrs=(1.0,), seeds=self.confirm_seeds, arms=arms)


#: A run whose final loss is NaN or above this many times the chance loss has diverged.
DIVERGED = 10


def final_loss(metrics: RecallMetrics, last: int, chance: float) -> torch.Tensor:
    """The mean loss of the last ``last`` records; inf for a run that diverged (NaN, or
    above ``DIVERGED`` times the ``chance`` loss)."""
    loss = metrics.final(last).loss
    ok = torch.isfinite(loss) & (loss <= DIVERGED * chance)
    return torch.where(ok, loss, torch.full_like(loss, math.inf))


@dataclass(frozen=True)
class TunedArm:
    """One scale rule tuned at one (optimiser, d_k), and the ablation's fixed-rate run of it."""

    optimizer: Optimizer
    d_k: int
    rule: Scale
    lrs: tuple[float, ...]  # the window it swept
    sweep_loss: torch.Tensor  # (lrs, sweep seeds) final loss, inf where a run diverged
    confirm_loss: torch.Tensor  # (confirm seeds,) final loss at best_lr, on fresh seeds
    fixed_lr: float  # the ablation's learning rate
    fixed_loss: torch.Tensor  # (sweep seeds,) the sweep's final loss at fixed_lr

    @property
    def mean_loss(self) -> torch.Tensor:
        """(lrs,) the sweep's final loss, mean over its seeds (inf if one diverged)."""
        return self.sweep_loss.mean(1)

    @property
    def best_index(self) -> int:
        return int(self.mean_loss.argmin())

    @property
    def best_lr(self) -> float:
        return self.lrs[self.best_index]

    @property
    def interior(self) -> bool:
        """Whether the best rate lies strictly inside the window."""
        return 0 < self.best_index < len(self.lrs) - 1

    @property
    def vertex_lr(self) -> float:
        """The best rate between grid points: the vertex of the parabola through the log
        loss at the best rate and its two neighbours, in log rate (the grid point itself
        where a neighbour is missing or diverged)."""
        i = self.best_index
        if not self.interior or not torch.isfinite(self.mean_loss[i - 1: i + 2]).all():
            return self.best_lr
        left, mid, right = self.mean_loss[i - 1: i + 2].log().tolist()
        step = math.log(self.lrs[i + 1] / self.lrs[i])
        shift = 0.5 * (left - right) / (left - 2 * mid + right)  # in grid steps, |.| <= 1/2
        return self.best_lr * math.exp(shift * step)


@memo
def run_tuning(tuning: Tuning = Tuning()) -> dict[tuple[Optimizer, int, Scale], TunedArm]:
    """Sweep, choose and confirm every rule at every (optimiser, d_k); memoised. The
    optimisers of one d_k and stage train as one ensemble."""
    fixed_lrs = dict(tuning.ablation.optimizers)
    out = {}
    for d_k in tuning.d_ks:
        sweeps = run_recalls(tuple(tuning.sweep(opt, d_k) for opt in tuning.optimizers))
        chance = math.log(sweeps[0].experiment.n_values)
        losses, best = {}, {}
        for optimizer, sweep in zip(tuning.optimizers, sweeps):
            final = final_loss(sweep.metrics, tuning.last, chance)
            losses[optimizer] = {rule: final[a] for a, rule in enumerate(tuning.rules)}
            best[optimizer] = tuple(tuning.window(optimizer, r)[int(final[a].mean(1).argmin())]
                                    for a, r in enumerate(tuning.rules))
        confirms = run_recalls(tuple(tuning.confirmation(opt, d_k, best[opt])
                                     for opt in tuning.optimizers))
        for optimizer, confirm in zip(tuning.optimizers, confirms):
            confirmed = final_loss(confirm.metrics, tuning.last, chance)[:, 0]  # (rules, seeds)
            fixed_lr = fixed_lrs[optimizer]
            for a, rule in enumerate(tuning.rules):
                window, swept = tuning.window(optimizer, rule), losses[optimizer][rule]
                (at,) = [i for i, lr in enumerate(window) if math.isclose(lr, fixed_lr)]
                out[(optimizer, d_k, rule)] = TunedArm(
                    optimizer=optimizer, d_k=d_k, rule=rule, lrs=window, sweep_loss=swept,
                    confirm_loss=confirmed[a], fixed_lr=fixed_lr, fixed_loss=swept[at],
                )
    return {key: out[key] for key in sorted(out, key=lambda k: (
        tuning.optimizers.index(k[0]), tuning.d_ks.index(k[1]), tuning.rules.index(k[2])))}


#: The tuned comparison in a realistic shape: 4 heads of d_k = 16 in one block with a
#: residual stream and LayerNorm (d_model = 64), Adam, everything else as in ``Tuning()``.
BLOCK_TUNING = Tuning(heads=4, d_ks=(16,), optimizers=("adam",))


@dataclass(frozen=True)
class LearnedScaleStudy:
    """A learned logit scale against the fixed 1/sqrt(d_k), at learning rates above the best.

    The learned arm starts at c = 1/sqrt(d_k) and learns log c with the weights (same
    optimiser and rate, no weight decay or other regularisation). The ablation's setup at
    one head dimension and the tuning's number of steps, fresh seeds; both arms and both
    optimisers train as one ensemble.
    """

    ablation: Ablation = Ablation()
    steps: int = Tuning.steps
    d_k: int = 64
    rates: tuple[tuple[Optimizer, tuple[float, ...]], ...] = (
        ("adam", (10 ** (-5 / 3), 10 ** (-4 / 3))), ("sgd", (1.0, 10 ** (1 / 3))))
    seeds: tuple[int, ...] = (2, 3, 4, 5, 6)
    fixed: Arm = Arm(Scale.INV_SQRT)
    learned: Arm = Arm(Scale.INV_SQRT, learn_scale=True)

    def experiment(self, optimizer: Optimizer) -> RecallExperiment:
        base = self.ablation.experiment(optimizer, 1.0, self.d_k)
        return dataclasses.replace(base, lrs=dict(self.rates)[optimizer], seeds=self.seeds,
                                   arms=(self.fixed, self.learned), steps=self.steps)

    def experiments(self) -> tuple[RecallExperiment, ...]:
        """One experiment per optimiser, to train together with :func:`run_recalls`."""
        return tuple(self.experiment(optimizer) for optimizer, _ in self.rates)


def draw_tuning(ax, arms: list[TunedArm], ceiling: float, chance: float) -> None:
    """One panel of final loss against learning rate for the ``arms`` of a tuning.

    Per arm: the sweep's mean over seeds (line) and range (band), runs above ``ceiling``
    (or diverged) drawn at it; the confirmation at the best rate (filled marker, mean and
    range); the sweep's mean at the ablation's fixed rate (open marker). A dotted line at
    chance.
    """
    from sdpa.figures import INK, PALETTE

    for arm in arms:
        color, rule = PALETTE[SCALE_COLORS[arm.rule]], arm.rule.label
        shown = arm.sweep_loss.clamp(max=ceiling)  # inf (diverged) too
        ax.plot(arm.lrs, shown.mean(1).tolist(), "-", marker=".", color=color, label=rule)
        ax.fill_between(arm.lrs, shown.amin(1).tolist(), shown.amax(1).tolist(), color=color,
                        alpha=0.2, lw=0)
        confirm, mean = arm.confirm_loss, arm.confirm_loss.mean().item()
        bar = [[mean - confirm.min().item()], [confirm.max().item() - mean]]
        ax.errorbar([arm.best_lr], [mean], yerr=bar, fmt="o", color=color, ms=5, capsize=2,
                    label=f"{rule}: best rate, {len(confirm)} fresh seeds")
        ax.plot([arm.fixed_lr], [min(arm.fixed_loss.mean().item(), ceiling)], "o", mfc="none",
                color=color, ms=7, label=f"{rule}: fixed rate")
    ax.axhline(chance, color=INK, ls=":", lw=1, label="chance")
    ax.set(xscale="log", yscale="log")
