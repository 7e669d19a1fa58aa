"""The pages' studies: the named experiments each page runs, and what they conclude.

Each study is a frozen configuration built from the engines of :mod:`sdpa.recall` and
:mod:`sdpa.gpt`, and its ``run_*`` function (memoised by :func:`sdpa.runtime.memo`)
returns typed results:

* :class:`Ablation` (the failure-modes page): every scale rule with both
  initialisations at one learning rate per optimiser;
* :class:`TemperatureStudy` (the temperature page): the scale rules at several head
  dimensions, a learned scale and two reparameterisations;
* ``QK_NORM_ARMS`` (the QK-norm page): the arms of its GPT learning-rate sweep;
* :class:`Tuning`, :func:`own_rate_tuning`, :func:`block_tuning`, :class:`LearnedScaleStudy`
  and :class:`PlateauStudy` (the tuned comparisons page): every rule at its own best
  learning rate, with W_Q and W_K's own rate, in a block, under a learned scale, and run on
  past the tuning's budget.

How large each study is in the two profiles (``quick`` and ``full``) is written once, in
:mod:`sdpa.sizes`: the snippets take their studies from there.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from sdpa.attention import Scale
from sdpa.models import GPTConfig
from sdpa.recall import (Arm, Optimizer, RecallExperiment, RecallHistory, RecallMetrics,
                         run_recalls, scale_arms)
from sdpa.runtime import memo


# ------------------------------------------------------------------ the failure-modes ablation


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
def run_ablation(ablation: Ablation) -> dict[tuple[Optimizer, int], RecallHistory]:
    """Every experiment of ``ablation``, keyed by (optimiser, d_k); the optimisers of one
    d_k train as one ensemble."""
    runs = {}
    for d_k in ablation.d_ks:
        experiments = tuple(ablation.experiment(opt, lr, d_k) for opt, lr in ablation.optimizers)
        runs |= {(e.optimizer, d_k): h for e, h in zip(experiments, run_recalls(experiments))}
    return {(opt, d_k): runs[(opt, d_k)] for opt, _ in ablation.optimizers for d_k in ablation.d_ks}


# ------------------------------------------------------------------ the temperature study


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


# ------------------------------------------------------------------ the QK-norm sweep


#: The QK-norm page's arms (its sweep, of learning rates and seeds: :mod:`sdpa.sizes`).
QK_NORM_ARMS: dict[str, GPTConfig] = {
    "scaled": GPTConfig(),
    "unscaled": GPTConfig(scale=Scale.NONE),
    "qk_norm": GPTConfig(qk_norm="rms"),
    "qk_norm_unscaled": GPTConfig(qk_norm="rms", scale=Scale.NONE),
    "softcap": GPTConfig(softcap=10.0),
}


# ------------------------------------------------------------------ tuned comparisons


#: What the best learning rate keeps the same from one scale rule to the next, in the two
#: hypotheses of the tuning page: W_Q and W_K move by the same fraction of their size per
#: step ("weights"), or the logits move by the same amount per step ("logits").
INVARIANTS = ("weights", "logits")


def predicted_lr_exponent(optimizer: Optimizer, rule: Scale, invariant: str) -> float:
    """How the best learning rate of ``rule`` should move with d_k, relative to 1/sqrt(d_k)'s,
    if the best rate keeps ``invariant`` the same (one of :data:`INVARIANTS`).

    A rule's factor is m = d_k^a times 1/sqrt(d_k) (a = 1/2 for none, -1/2 for 1/d_k), and
    every rule starts W_Q and W_K from the same draw. One step at rate lr moves W_Q and W_K
    by about lr under Adam (whatever their gradient's size) and by m lr under SGD (the factor
    multiplies their gradient), relative to the 1/sqrt(d_k) head; the logits, m times more
    sensitive to W_Q and W_K, move by m lr (Adam) or m^2 lr (SGD). Keeping the weights'
    step fixed gives the exponent 0 (Adam) or -a (SGD); keeping the logits' step fixed gives
    -a (Adam) or -2a (SGD).
    """
    if invariant not in INVARIANTS:
        raise ValueError(f"invariant must be one of {INVARIANTS}, not {invariant!r}")
    a = {Scale.NONE: 0.5, Scale.INV_SQRT: 0.0, Scale.INV: -0.5}[rule]
    power = {("adam", "weights"): 0, ("sgd", "weights"): 1,
             ("adam", "logits"): 1, ("sgd", "logits"): 2}[(optimizer, invariant)]
    return 0.0 if power == 0 else -power * a


@dataclass(frozen=True)
class Tuning:
    """The scale rules on the recall task, each at its own best learning rate.

    For every (optimiser, d_k), each rule sweeps a window of ``points`` learning rates
    spaced by 10^(1/per_decade) around its centre (the same at every d_k) on
    ``sweep_seeds``; the rate with the lowest mean final loss is its best, and is rerun on
    ``confirm_seeds``, seeds the choice never saw. Every window holds the failure-modes
    ablation's fixed rate, so the sweep's own runs there are the fixed-rate comparison.
    Everything else but ``steps`` is the ablation's setup. Each (optimiser, rule) is one
    experiment per stage, with its own learning rates; all of one d_k and stage train as
    one ensemble (:func:`sdpa.recall.run_recalls`).
    With ``heads`` set, the model is a :class:`sdpa.models.RecallBlock` of that many heads
    of d_k (d_model = heads x d_k).
    With ``qk_rates`` set, each rule's candidates are W_Q and W_K learning d_k^e times the
    shared rate, one per exponent e (W_Q and W_K's own rate, tuned separately from the other
    weights'); the sweep picks the best (candidate, rate) and ``fixed_loss`` is the first
    candidate's.
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
    qk_rates: tuple[float, ...] = ()

    def candidates(self, d_k: int, rule: Scale) -> tuple[Arm, ...]:
        """The rule's arms: plain, or one per W_Q and W_K rate exponent of ``qk_rates``."""
        if not self.qk_rates:
            return (Arm(rule),)
        return tuple(Arm(rule, lr_q=d_k**e, lr_k=d_k**e) for e in self.qk_rates)

    def centre(self, optimizer: Optimizer, rule: Scale) -> float:
        """The middle learning rate of the rule's window, 10^(k / per_decade)."""
        (k,) = [k for o, r, k in self.centres if (o, r) == (optimizer, rule)]
        return 10 ** (k / self.per_decade)

    @property
    def offsets(self) -> tuple[float, ...]:
        """The window around a centre: ``points`` factors spaced by 10^(1/per_decade)."""
        half = self.points // 2
        return tuple(10 ** (j / self.per_decade) for j in range(-half, self.points - half))

    def window(self, optimizer: Optimizer, rule: Scale) -> tuple[float, ...]:
        """The learning rates the rule sweeps."""
        centre = self.centre(optimizer, rule)
        return tuple(offset * centre for offset in self.offsets)

    def _experiment(self, optimizer: Optimizer, d_k: int, rule: Scale,
                    **fields) -> RecallExperiment:
        base = dataclasses.replace(self.ablation.experiment(optimizer, 1.0, d_k),
                                   steps=self.steps, arms=self.candidates(d_k, rule))
        if self.heads is not None:
            fields |= {"heads": self.heads, "d_model": self.heads * d_k}
        return dataclasses.replace(base, **fields)

    def sweep(self, optimizer: Optimizer, d_k: int, rule: Scale) -> RecallExperiment:
        """The rule's sweep: every rate of its window, on the sweep seeds."""
        return self._experiment(optimizer, d_k, rule, lrs=self.window(optimizer, rule),
                                seeds=self.sweep_seeds)

    def confirmation(self, optimizer: Optimizer, d_k: int, rule: Scale,
                     lr: float, arm: Arm | None = None) -> RecallExperiment:
        """The rule at its best rate ``lr`` (and candidate ``arm``), on the fresh seeds."""
        return self._experiment(optimizer, d_k, rule, lrs=(lr,), seeds=self.confirm_seeds,
                                arms=(arm or Arm(rule),))


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
    arm: Arm | None = None  # the chosen candidate (None: the plain rule, the only one)

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
def run_tuning(tuning: Tuning) -> dict[tuple[Optimizer, int, Scale], TunedArm]:
    """Sweep, choose and confirm every rule at every (optimiser, d_k); memoised. Every
    (optimiser, rule) of one d_k and stage trains in one ensemble."""
    fixed_lrs = dict(tuning.ablation.optimizers)
    grid = [(optimizer, rule) for optimizer in tuning.optimizers for rule in tuning.rules]
    out = {}
    for d_k in tuning.d_ks:
        sweeps = run_recalls(tuple(tuning.sweep(opt, d_k, rule) for opt, rule in grid))
        chance = math.log(sweeps[0].experiment.n_values)
        every = [final_loss(s.metrics, tuning.last, chance) for s in sweeps]  # (arms, lrs, seeds)
        picks = [divmod(int(loss.mean(2).argmin()), loss.shape[1]) for loss in every]
        best = [(s.experiment.arms[a], s.experiment.lrs[i]) for s, (a, i) in zip(sweeps, picks)]
        confirms = run_recalls(tuple(tuning.confirmation(opt, d_k, rule, lr, arm)
                                     for (opt, rule), (arm, lr) in zip(grid, best)))
        for (optimizer, rule), sweep, loss, (a, _), (arm, _), confirm in zip(
                grid, sweeps, every, picks, best, confirms):
            window, fixed_lr = sweep.experiment.lrs, fixed_lrs[optimizer]
            (at,) = [i for i, lr in enumerate(window) if math.isclose(lr, fixed_lr)]
            out[(optimizer, d_k, rule)] = TunedArm(
                optimizer=optimizer, d_k=d_k, rule=rule, lrs=window, sweep_loss=loss[a],
                confirm_loss=final_loss(confirm.metrics, tuning.last, chance)[0, 0],
                fixed_lr=fixed_lr, fixed_loss=loss[0, at],
                arm=arm if tuning.qk_rates else None,
            )
    return {key: out[key] for key in sorted(out, key=lambda k: (
        tuning.optimizers.index(k[0]), tuning.d_ks.index(k[1]), tuning.rules.index(k[2])))}


def own_rate_tuning(tuning: Tuning) -> Tuning:
    """The unscaled head of ``tuning`` with W_Q and W_K's own rate: d_k^(-1/4) or d_k^(-1/2)
    times the shared one (the multipliers the equivalence names under Adam and under SGD;
    d_k^0 is ``tuning``'s plain head), the shared rate swept around 1/sqrt(d_k)'s centre."""
    return dataclasses.replace(tuning, rules=(Scale.NONE,), qk_rates=(-0.25, -0.5), centres=(
        ("adam", Scale.NONE, -7), ("sgd", Scale.NONE, -1)))


def block_tuning(tuning: Tuning) -> Tuning:
    """``tuning`` in a realistic shape: 4 heads of d_k = 16 in one block with a residual
    stream and LayerNorm (d_model = 64), Adam, everything else unchanged."""
    return dataclasses.replace(tuning, heads=4, d_ks=(16,), optimizers=("adam",))


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


# ------------------------------------------------------------------ speed or capability


@dataclass(frozen=True)
class PlateauStudy:
    """The tuned rules run on past the tuning's budget: is "ends higher after 150 steps"
    about speed or about what the head can learn?

    Each rule of ``tuning`` at its best rate (the rate that was best after
    ``tuning.steps``) trains for ``steps``, on its confirmation seeds, at every
    (optimiser, d_k) of ``d_ks``: a run of its own (the batches are drawn for the longer
    run), read at the tuning's budget and at its end.
    """

    tuning: Tuning = Tuning()
    d_ks: tuple[int, ...] = (64,)
    steps: int = 600
    threshold: float = 0.1  # the loss a "steps to" reading waits for

    def experiment(self, arm: TunedArm) -> RecallExperiment:
        return dataclasses.replace(
            self.tuning.confirmation(arm.optimizer, arm.d_k, arm.rule, arm.best_lr),
            steps=self.steps)


@dataclass(frozen=True)
class PlateauRun:
    """One tuned rule run long: its loss per record and seed, and three readings of it."""

    arm: TunedArm
    steps: tuple[int, ...]  # the step of each record
    loss: torch.Tensor  # (records, seeds) the batch loss
    smooth: torch.Tensor  # (records, seeds) at each record, the mean of the last `last`
    early: torch.Tensor  # (seeds,) the final loss as the tuning reads it, at its budget
    final: torch.Tensor  # (seeds,) the final loss at the end of the long run
    steps_to: torch.Tensor  # (seeds,) the first step whose smoothed loss is below threshold


@memo
def run_plateau(study: PlateauStudy) -> dict[tuple[Optimizer, int, Scale], PlateauRun]:
    """Every tuned rule of ``study`` run long; the runs of one d_k train as one ensemble."""
    tuned = run_tuning(study.tuning)
    keys = [k for k in tuned if k[1] in study.d_ks]
    histories = [h for d_k in study.d_ks  # one ensemble per d_k (run_recalls' rule)
                 for h in run_recalls(tuple(study.experiment(tuned[k]) for k in keys
                                            if k[1] == d_k))]
    keys = [k for d_k in study.d_ks for k in keys if k[1] == d_k]
    t, last = study.tuning, study.tuning.last
    out = {}
    for key, history in zip(keys, histories):
        e = history.experiment
        chance = math.log(e.n_values)
        loss = history.metrics.loss[:, 0, 0]  # (records, seeds)
        loss = torch.where(torch.isfinite(loss) & (loss <= DIVERGED * chance), loss,
                           torch.full_like(loss, math.inf))  # a diverged run: inf
        steps = tuple(i * e.record_every for i in range(loss.shape[0]))
        early_at = steps.index(t.steps) + 1
        smooth = torch.stack([loss[max(0, i - last + 1): i + 1].mean(0) for i in range(len(steps))])
        below = smooth <= study.threshold
        first = torch.where(below.any(0), below.float().argmax(0), len(steps) - 1)
        out[key] = PlateauRun(
            arm=tuned[key], steps=steps, loss=loss, smooth=smooth,
            early=loss[early_at - last: early_at].mean(0), final=loss[-last:].mean(0),
            steps_to=torch.where(below.any(0), torch.tensor(steps, dtype=torch.float)[first],
                                 torch.full_like(first, math.inf, dtype=torch.float)))
    return out
