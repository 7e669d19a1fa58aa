"""The recall engine: one attention head (or block) learning associative recall, many runs at once.

A recall experiment is a frozen configuration: the task's and the model's shapes, the
optimiser, and the grid arms x learning rates x seeds that it trains. Running it is
memoised by :func:`sdpa.runtime.memo`: every snippet that asks for the same configuration
shares one run, in the build and in the test session alike. The result is a
:class:`RecallHistory` with named fields; read it by field and by configuration, never
by position or display label::

    from sdpa.attention import Scale
    from sdpa.recall import Arm, RecallExperiment, run_recall

    experiment = RecallExperiment(d_k=64, optimizer="adam", lrs=(3e-3, 1e-2, 3e-2),
                                  arms=(Arm(Scale.NONE), Arm(Scale.INV_SQRT)), seeds=(0, 1, 2))
    history = run_recall(experiment)  # all arms x learning rates x seeds: one computation
    history.metrics.loss.shape        # (records, arms, lrs, seeds)
    history.arm(Arm(Scale.NONE), lr=1e-2).final().loss   # (seeds,) mean of the last records

The model is :class:`sdpa.models.RecallHead` (or, with ``heads``, a
:class:`sdpa.models.RecallBlock`) on the associative-recall task of :mod:`sdpa.tasks`.
Members share data and initial weights when they share a seed (a paired comparison), and
differ in their arm and learning rate. Each member is one run of
:func:`sdpa.training.train`, the plain loop on ``torch.optim``; the members train
together, through that loop, as one :class:`sdpa.training.Ensemble`, and a test checks
that each member gets the losses and weights of its run alone (:func:`train_member`).
Experiments of one shape that differ only in optimiser, arms, learning rates and seeds
train together (:func:`run_recalls`): one ensemble per optimiser, Adam or SGD, the same
runs in fewer and larger computations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from sdpa.attention import Scale, entropy
from sdpa.models import RecallBlock, RecallHead, RecallOutput, init_unit_variance
from sdpa.runtime import device as default_device
from sdpa.runtime import memo, seeded
from sdpa.tasks import RecallTask, recall_batches
from sdpa.training import Ensemble, make_optimizer, member_losses, train, warmup_cosine

Init = Literal["unit", "default"]
Optimizer = Literal["adam", "sgd"]


# ------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class Arm:
    """One variant of the recall head: its logit scale and how W_Q and W_K start and learn.

    scale:          the rule for the logit factor (1, 1/sqrt(d_k) or 1/d_k).
    init:           "unit": weights N(0, 1/fan_in), q and k components of variance 1;
                    "default": ``nn.Linear``'s own, variance about 1/3.
    learn_scale:    learn the factor (as its logarithm) with the weights.
    q_init, k_init: multiply the initial W_Q (W_K) by this constant.
    lr_q, lr_k:     multiply the learning rate of W_Q (W_K) by this constant.
    """

    scale: Scale = Scale.INV_SQRT
    init: Init = "unit"
    learn_scale: bool = False
    q_init: float = 1.0
    k_init: float = 1.0
    lr_q: float = 1.0
    lr_k: float = 1.0


def scale_arms(inits: tuple[Init, ...] = ("unit",),
               rules: tuple[Scale, ...] = tuple(Scale)) -> tuple[Arm, ...]:
    """One fixed-scale arm per (initialisation, scale rule)."""
    return tuple(Arm(rule, init=init) for init in inits for rule in rules)


@dataclass(frozen=True)
class RecallExperiment:
    """Task, model, optimiser and the grid arms x learning rates x seeds, run as one.

    The model is :class:`sdpa.models.RecallHead` (one head), or with ``heads`` set a
    :class:`sdpa.models.RecallBlock` of that many heads of ``d_k`` (then d_model must be
    heads x d_k). ``lrs`` are learning rates: each member trains at one of them (times its
    arm's ``lr_q`` and ``lr_k`` for W_Q and W_K).
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
    schedule: Literal["constant", "cosine"] = "constant"  # cosine: warm-up, then decay to 0
    warmup: int = 0  # steps of linear warm-up before the cosine

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


def member_lrs(arm: Arm, lr: float, names: Iterable[str]) -> dict[str, float | None]:
    """The learning rate of each of one member's weights ``names`` (None: not trained)."""
    special = {"W_Q.weight": lr * arm.lr_q, "W_K.weight": lr * arm.lr_k,
               "log_scale": lr if arm.learn_scale else None}
    return {name: special.get(name, lr) for name in names}


# ------------------------------------------------------------------ results


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


# ------------------------------------------------------------------ the runs


def _ensemble(experiments: tuple[RecallExperiment, ...]) -> Ensemble:
    """Every member of ``experiments`` (of one shape), in order, as one
    :class:`sdpa.training.Ensemble` on the device."""
    members = [member for e in experiments for member in e.members()]
    # a member starts from its arm's draw for its seed, whatever its rate: each (arm, seed)
    # is drawn once
    starts = {key: recall_model(experiments[0], *key)
              for key in dict.fromkeys((arm, seed) for arm, _, seed in members)}
    names = [name for name, _ in next(iter(starts.values())).named_parameters()]
    return Ensemble([starts[arm, seed] for arm, _, seed in members],
                    [member_lrs(arm, lr, names) for arm, lr, _ in members]).to(default_device())


def _batches(experiments: tuple[RecallExperiment, ...], n_batches: int) -> Iterator[tuple]:
    """Each step's batch for every member of ``experiments``, ``(query, pairs, target)``
    with a leading member axis: members of one seed share it. Every batch is drawn, and
    embedded, once."""
    device = default_device()
    member_seeds = [seed for e in experiments for *_, seed in e.members()]
    seeds = list(dict.fromkeys(member_seeds))
    seed_of = torch.tensor([seeds.index(s) for s in member_seeds], device=device)
    data = [recall_batches(experiments[0].task, s, n_batches).to(device) for s in seeds]
    tokens = [d.tokens() for d in data]
    # (seeds, batches, batch, ...): every batch of every seed
    query = torch.stack([q for q, _ in tokens])
    pairs = torch.stack([p for _, p in tokens])
    target = torch.stack([d.target for d in data])
    for t in range(n_batches):  # index_select: faster than x[seed_of, t]
        yield tuple(x[:, t].index_select(0, seed_of) for x in (query, pairs, target))


def recall_loss(out: RecallOutput, target: torch.Tensor) -> torch.Tensor:
    """The cross-entropy of one model's output on its targets."""
    return F.cross_entropy(out.logits, target)


def _member_losses(out: RecallOutput, target: torch.Tensor) -> torch.Tensor:
    return member_losses(out.logits, target)


@torch.no_grad()
def _metrics(ensemble: Ensemble, losses: torch.Tensor, out: RecallOutput,
             target: torch.Tensor) -> RecallMetrics:
    """Every metric of every member, from one step's forward and backward pass."""
    grads = ensemble.grads(("W_Q.weight", "W_K.weight", "W_V.weight"))
    return RecallMetrics(
        loss=losses,
        accuracy=(out.logits.argmax(-1) == target).float().mean(1),
        entropy=entropy(out.attention).flatten(1).mean(1),  # (and over heads)
        max_weight=out.attention.amax(-1).flatten(1).mean(1),
        max_logit=out.scores.abs().flatten(1).amax(1),
        logit_var=out.scores.flatten(1).var(1),
        grad_q=grads["W_Q.weight"].flatten(1).norm(dim=1),
        grad_k=grads["W_K.weight"].flatten(1).norm(dim=1),
        grad_v=grads["W_V.weight"].flatten(1).norm(dim=1),
        scale=ensemble.state()["log_scale"].exp(),
    )


def _measured(ensemble: Ensemble, batch: tuple) -> RecallMetrics:
    """Every metric of every member on ``batch``: the loop's forward and backward pass,
    with no update after them."""
    *inputs, target = batch
    out = ensemble(*inputs)
    losses = _member_losses(out, target)
    ensemble.zero_grad()
    losses.sum().backward()
    return _metrics(ensemble, losses.detach(), out, target)


def _histories(experiments: tuple[RecallExperiment, ...],
               records: dict[int, RecallMetrics]) -> list[RecallHistory]:
    """The records (step -> every member's metrics) as one history per experiment, in CPU
    tensors (records, arms, lrs, seeds)."""
    fields = [f.name for f in dataclasses.fields(RecallMetrics)]
    whole = {f: torch.stack([getattr(r, f) for r in records.values()]).cpu() for f in fields}
    blocks = [len(e.members()) for e in experiments]
    out = []
    for e, part in zip(experiments, zip(*[whole[f].split(blocks, 1) for f in fields])):
        grid = (len(records), len(e.arms), len(e.lrs), len(e.seeds))
        out.append(RecallHistory(e, torch.tensor(list(records)), RecallMetrics(
            **{f: t.reshape(grid) for f, t in zip(fields, part)})))
    return out


def schedule(experiment: RecallExperiment,
             optimizer: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler | None:
    """The experiment's learning-rate schedule on ``optimizer`` (None: a constant rate)."""
    if experiment.schedule == "constant":
        return None
    return warmup_cosine(optimizer, experiment.steps, experiment.warmup)


@memo
def run_recall(experiment: RecallExperiment) -> RecallHistory:
    """Train every member of ``experiment`` together; memoised by the (frozen) config."""
    return run_recalls((experiment,))[0]


@memo(share=True)
def run_recalls(experiments: tuple[RecallExperiment, ...]) -> tuple[RecallHistory, ...]:
    """Train experiments that differ only in optimiser, arms, learning rates and seeds:
    the members of each optimiser as one ensemble, by :func:`sdpa.training.train` (fewer,
    larger computations: faster on a CPU). Members are independent, so each history is
    :func:`run_recall`'s; memoised."""
    shapes = {dataclasses.replace(e, optimizer="adam", arms=(), lrs=(), seeds=())
              for e in experiments}
    if len(shapes) != 1:
        raise ValueError("experiments trained together differ in more than their optimiser, "
                         "arms, learning rates and seeds")
    histories = {}
    for kind in dict.fromkeys(e.optimizer for e in experiments):
        group = tuple(e for e in experiments if e.optimizer == kind)
        first, records = group[0], {}
        ensemble = _ensemble(group)
        optimizer = make_optimizer(kind, ensemble.param_groups())
        batches = _batches(group, first.steps + 1)

        def measure(step: int, losses: torch.Tensor, out: RecallOutput, target: torch.Tensor):
            if step % first.record_every == 0:
                records[step] = _metrics(ensemble, losses, out, target)

        train(ensemble, optimizer, itertools.islice(batches, first.steps), _member_losses,
              schedule(first, optimizer), measure)
        records[first.steps] = _measured(ensemble, next(batches))  # after the last update
        histories.update(zip(group, _histories(group, records)))
    return tuple(histories[e] for e in experiments)


def train_member(experiment: RecallExperiment, arm: Arm, lr: float,
                 seed: int) -> tuple[RecallHead | RecallBlock, list[float]]:
    """One member of ``experiment`` trained alone by the plain loop,
    :func:`sdpa.training.train`: the trained model and the loss of each of its steps.

    :func:`run_recalls` computes exactly this for every member at once;
    ``tests/test_library.py`` checks that both give the same losses and weights.
    """
    dev = default_device()
    model = recall_model(experiment, arm, seed).to(dev)
    rates = member_lrs(arm, lr, [name for name, _ in model.named_parameters()])
    groups = [{"params": [model.get_parameter(name)], "lr": rate}
              for name, rate in rates.items() if rate is not None]
    optimizer = make_optimizer(experiment.optimizer, groups)
    # the draw of run_recalls, which measures one batch more after the last step
    data = recall_batches(experiment.task, seed, experiment.steps + 1).to(dev)
    batches = ((*data.tokens(t), data.target[t]) for t in range(experiment.steps))
    return model, train(model, optimizer, batches, recall_loss, schedule(experiment, optimizer))


@memo(share=True)
def recall_at_init(experiment: RecallExperiment, n_batches: int = 8) -> RecallHistory:
    """Every metric at initialisation, averaged over ``n_batches`` fresh batches.

    One record (step 0); nothing is trained: each batch's forward and backward pass is
    measured as :func:`run_recalls` measures a step, and no step follows.
    """
    ensemble = _ensemble((experiment,))
    records = dict(enumerate(_measured(ensemble, b) for b in _batches((experiment,), n_batches)))
    mean = _histories((experiment,), records)[0].metrics.map(lambda t: t.mean(0, keepdim=True))
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
