"""The W_Q/W_K plane: every scale rule as one point of one plane, and the plane measured.

A logit factor is the same as a rescaling of W_Q and W_K (the temperature page proves it
step by step). Take the head *without* a factor, and two multipliers: ``a`` on W_Q's and
W_K's initial standard deviation, ``r`` on their learning rate (every other weight at the
shared rate). A head with logit factor ``c`` at (a, r) computes, step for step, what the
unscaled head computes at

* (a sqrt(c), r sqrt(c)) under Adam, with Adam's epsilon for W_Q and W_K divided by
  sqrt(c) (:func:`identity_runs`);
* (a sqrt(c), r c) under SGD.

When d_k^(1/4) is a power of two (d_k = 16, 256) both hold bit for bit.

So one plane of the unscaled head holds every rule. Writing a = d_k^(-u/4) and
r = d_k^(-w/4), the rules' defaults (a = r = 1 with their factor) sit at integer steps
(u, w): no factor at (0, 0); 1/sqrt(d_k) at (1, 1) under Adam and (1, 2) under SGD; 1/d_k
at (2, 2) and (2, 4). A :class:`Plane` measures the final loss on a grid of such steps,
each point at every shared rate of a window, on the choice seeds; :func:`run_plane` picks
each rule's default at its best shared rate, the best point of the u = 0 column (the
unscaled start, its W_Q/W_K rate tuned) and the plane's best point, and reruns them on
fresh seeds, paired by seed. The shared rate is tuned for every point of the plane alike.

Gradient clipping by the global norm breaks the identity: the clip scales every weight's
step by the norm of the whole gradient, which the rescaling of W_Q and W_K changes.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from sdpa.ablation import Ablation, final_loss
from sdpa.attention import Scale
from sdpa.language import logit_spread
from sdpa.recall import (Arm, Optimizer, RecallExperiment, member_lrs, recall_loss, recall_model,
                         run_recalls, schedule)
from sdpa.runtime import each, memo
from sdpa.stats import Interval, chance_note, paired
from sdpa.tables import markdown_table
from sdpa.tasks import recall_batches
from sdpa.training import OPTIMIZER_LABELS, make_optimizer, train

#: Each rule's factor as a power of d_k: c = d_k^(-alpha).
EXPONENTS = {Scale.NONE: 0.0, Scale.INV_SQRT: 0.5, Scale.INV: 1.0}
#: The plane's steps are quarter powers of d_k: a = d_k^(-u/4), r = d_k^(-w/4).
STEP = 0.25


def rule_step(rule: Scale, optimizer: Optimizer) -> tuple[int, int]:
    """Where ``rule``'s default lies on the plane, in steps (u, w) of d_k^(-1/4)."""
    alpha = EXPONENTS[rule]
    u = round(alpha / 2 / STEP)  # a = sqrt(c) = d_k^(-alpha/2)
    w = u if optimizer == "adam" else 2 * u  # r = sqrt(c) (Adam) or c (SGD)
    return u, w


def multiplier(d_k: int, steps: float) -> float:
    """d_k^(-steps/4): a plane coordinate from its steps."""
    return d_k ** (-steps * STEP)


def plane_arm(d_k: int, point: tuple[int, int]) -> Arm:
    """The unscaled head at ``point`` = (u, w): W_Q and W_K start d_k^(-u/4) times their
    unit-variance draw and learn at d_k^(-w/4) times the shared rate."""
    m, r = (multiplier(d_k, s) for s in point)
    return Arm(Scale.NONE, q_init=m, k_init=m, lr_q=r, lr_k=r)


def point_arm(d_k: int, point: tuple[int, int], optimizer: Optimizer) -> Arm:
    """The head a point of the plane trains as: a rule's own point as that rule (with its
    factor), every other point as the unscaled head there (:func:`plane_arm`). By the
    identity the two are one head; as the unscaled head, Adam's epsilon for W_Q and W_K
    would differ from the rule's (:func:`identity_runs` rescales it), so a rule would be
    compared with itself up to epsilon and rounding."""
    rule = next((rule for rule in Scale if rule_step(rule, optimizer) == tuple(point)), None)
    return Arm(rule) if rule is not None else plane_arm(d_k, point)


@dataclass(frozen=True)
class Plane:
    """The grid of (u, w) points, the shared rates and the seeds, for one model shape:
    ``ablation``'s task and head (with ``heads``, a :class:`sdpa.models.RecallBlock`),
    ``steps`` with a linear warm-up over a fraction ``warmup`` and a cosine decay to zero.
    At every d_k of ``grid_d_ks`` the grid ``u_steps`` x ``w_steps`` is measured, elsewhere
    the rules' defaults; every point at ``rates`` shared rates 10^(1/per_decade) apart."""

    ablation: Ablation = Ablation()
    heads: int | None = None
    steps: int = 150
    warmup: float = 0.1
    d_ks: tuple[int, ...] = (16, 64, 256)
    grid_d_ks: tuple[int, ...] = (64,)
    optimizers: tuple[Optimizer, ...] = ("adam", "sgd")
    u_steps: tuple[int, ...] = (0, 1, 2)
    #: the w steps (W_Q/W_K rate) of each optimiser's grid
    w_steps: tuple[tuple[Optimizer, tuple[int, ...]], ...] = (
        ("adam", (0, 1, 2)), ("sgd", (0, 2, 4)))
    per_decade: int = 3
    rates: int = 5
    #: (optimiser, k): the shared rates' centre is 10^(k / per_decade)
    centres: tuple[tuple[Optimizer, int], ...] = (("adam", -5), ("sgd", 0))
    choose_seeds: tuple[int, ...] = (0, 1)
    confirm_seeds: tuple[int, ...] = (2, 3, 4, 5, 6)
    last: int = 8  # the final loss is the mean of the last `last` records
    record_every: int = 5

    def points(self, optimizer: Optimizer, d_k: int) -> tuple[tuple[int, int], ...]:
        """The (u, w) steps measured at ``d_k``: the grid, or the rules' defaults."""
        if d_k in self.grid_d_ks:
            return tuple((u, w) for u in self.u_steps for w in dict(self.w_steps)[optimizer])
        return tuple(rule_step(rule, optimizer) for rule in Scale)

    def lrs(self, optimizer: Optimizer) -> tuple[float, ...]:
        """The shared rates every point trains at."""
        centre = dict(self.centres)[optimizer]
        half = self.rates // 2
        return tuple(10 ** ((centre + k) / self.per_decade)
                     for k in range(-half, self.rates - half))

    def experiment(self, optimizer: Optimizer, d_k: int, arms: tuple[Arm, ...],
                   lrs: tuple[float, ...], seeds: tuple[int, ...],
                   steps: int | None = None) -> RecallExperiment:
        """``arms`` x ``lrs`` x ``seeds`` in this plane's setup (``steps``: its own budget,
        with the warm-up the same fraction of it)."""
        steps = steps or self.steps
        base = dataclasses.replace(
            self.ablation.experiment(optimizer, lrs[0], d_k), arms=arms, lrs=lrs, seeds=seeds,
            steps=steps, record_every=self.record_every, schedule="cosine",
            warmup=round(self.warmup * steps))
        if self.heads is not None:
            base = dataclasses.replace(base, heads=self.heads, d_model=self.heads * d_k)
        return base

    def sweep(self, optimizer: Optimizer, d_k: int) -> RecallExperiment:
        """Every point at every shared rate, on the choice seeds."""
        arms = tuple(point_arm(d_k, p, optimizer) for p in self.points(optimizer, d_k))
        return self.experiment(optimizer, d_k, arms, self.lrs(optimizer), self.choose_seeds)


def below_divergence(loss: torch.Tensor, i: int) -> bool:
    """Whether the rate after index ``i`` diverged on a choice seed (``loss``: (lrs, seeds),
    inf where a run diverged): a rate chosen at ``i`` is then the fastest that trains, a
    stability limit rather than an optimum between slower and faster rates."""
    return i + 1 < len(loss) and not bool(torch.isfinite(loss[i + 1]).all())


#: The names of a plane's confirmed settings: each rule's default, the best point of the
#: u = 0 column (the unscaled start at its best W_Q/W_K rate: "column") and the plane's best.
SETTINGS = ("none", "inv_sqrt", "inv", "column", "best")
_RULES = {"none": Scale.NONE, "inv_sqrt": Scale.INV_SQRT, "inv": Scale.INV}


@dataclass(frozen=True)
class PlaneResult:
    """One (optimiser, d_k) of a plane: the choice seeds' losses at every point and shared
    rate (inf where a run diverged), and the confirmed settings (:data:`SETTINGS`: name ->
    (point, shared rate)) with their final losses on the fresh seeds, paired by seed."""

    optimizer: Optimizer
    d_k: int
    points: tuple[tuple[int, int], ...]
    lrs: tuple[float, ...]
    loss: torch.Tensor  # (points, lrs, choose seeds)
    chance: float
    settings: dict[str, tuple[tuple[int, int], float]]
    confirm: dict[str, torch.Tensor]  # name -> (confirm seeds,)

    @property
    def log_loss(self) -> torch.Tensor:
        """(points, lrs) the mean log final loss over the choice seeds (inf if one diverged)."""
        return self.loss.log().mean(-1)

    @property
    def surface(self) -> torch.Tensor:
        """(points,) each point at its best shared rate: mean log final loss."""
        return self.log_loss.amin(-1)

    def interior(self, name: str) -> bool:
        """Whether a setting's shared rate lies strictly inside the window, and its point
        strictly inside the grid: in u and w for the plane's best, in w for the column's."""
        (u, w), lr = self.settings[name]
        inside = 0 < self.lrs.index(lr) < len(self.lrs) - 1
        us, ws = (sorted(set(axis)) for axis in zip(*self.points))
        if name in ("best", "column"):
            inside &= ws[0] < w < ws[-1]
        if name == "best":
            inside &= us[0] < u < us[-1]
        return inside

    def stability(self, name: str) -> bool:
        """Whether a setting's chosen shared rate sits just below one that diverged at its
        point on a choice seed (:func:`below_divergence`)."""
        point, lr = self.settings[name]
        return below_divergence(self.loss[self.points.index(point)], self.lrs.index(lr))

    def diverged(self, name: str) -> int:
        """How many of a confirmed setting's fresh seeds diverged."""
        return int((~torch.isfinite(self.confirm[name])).sum())

    def versus_best(self, name: str) -> Interval | None:
        """A confirmed setting's loss over the best point's, seed by seed: the mean
        difference of log losses and its t interval (None if a run of either diverged)."""
        if self.diverged(name) or self.diverged("best"):
            return None
        return paired(self.confirm[name], self.confirm["best"], log=True)


#: How tables name the confirmed settings.
SETTING_LABELS = {"none": Scale.NONE.label, "inv_sqrt": Scale.INV_SQRT.label,
                  "inv": Scale.INV.label, "column": "best of u = 0", "best": "best point"}


def settings_table(plane: Plane, results: dict[tuple[Optimizer, int], PlaneResult]) -> str:
    """The confirmed settings of every (optimiser, d_k) as a Markdown table: each rule's
    default, the u = 0 column's best and the plane's best point, their shared rate, loss
    and ratio to the best point."""
    def ratio(r: PlaneResult, name: str) -> str:
        if name == "best":
            return "1"
        if r.settings[name] == r.settings["best"]:  # one point, one rate: one run
            return "the best point itself"
        v = r.versus_best(name)
        if v is None:
            return "—"
        return v.ratio()

    def loss(r: PlaneResult, name: str) -> str:
        values = r.confirm[name]
        if r.diverged(name):
            return f"diverged on {r.diverged(name)} of {len(values)} seeds"
        return (f"{values.log().mean().exp().item():.3g} "
                f"({values.min().item():.2g}–{values.max().item():.2g})")

    rows, intervals = [], 0
    for (optimizer, d_k), r in results.items():
        for name in SETTINGS[:3] + SETTINGS[3 if len(r.points) > 3 else 4:]:  # column: grid only
            intervals += (name != "best" and r.settings[name] != r.settings["best"]
                          and r.versus_best(name) is not None)
            point, lr = r.settings[name]
            rows.append((OPTIMIZER_LABELS[optimizer], d_k, SETTING_LABELS[name], f"{point}",
                         f"{lr:.3g}" + ("" if r.interior(name) else " (edge)")
                         + (" (stability)" if r.stability(name) else ""), loss(r, name),
                         ratio(r, name)))
    column = any(len(r.points) > 3 for r in results.values())
    return markdown_table(
        ["optimiser", "d_k", "setting", "point (u, w)", "shared rate",
         "final loss, geometric mean (min–max)", "over the best point, paired"], rows,
        align="lrllrrr",
        caption="Each rule's default" + (", the best of the u = 0 column (unscaled start, its "
        "W_Q/W_K rate tuned)" if column else "") + " and the plane's best point, rerun on "
        f"{len(plane.confirm_seeds)} fresh seeds at the shared rate {len(plane.choose_seeds)} "
        "choice seeds chose; last column: its loss over the best point's, paired, 95% t interval. "
        "(edge): the rate or point is at the edge of what was measured; (stability): the next "
        f"rate up diverged on a choice seed. {chance_note(intervals)}.")


def _choose(plane: Plane, optimizer: Optimizer, d_k: int,
            loss: torch.Tensor) -> dict[str, tuple[tuple[int, int], float]]:
    points = plane.points(optimizer, d_k)
    log_loss = loss.log().mean(-1)
    lrs = plane.lrs(optimizer)
    settings = {}
    for name, rule in _RULES.items():
        p = points.index(rule_step(rule, optimizer))
        settings[name] = (points[p], lrs[int(log_loss[p].argmin())])
    column = torch.tensor([u == 0 for u, _ in points])
    for name, kept in (("column", column), ("best", torch.ones_like(column))):
        p, i = divmod(int(log_loss.masked_fill(~kept[:, None], math.inf).argmin()), len(lrs))
        settings[name] = (points[p], lrs[i])
    return settings


def _confirmation(plane: Plane, optimizer: Optimizer, d_k: int, name: str,
                  setting: tuple[tuple[int, int], float]) -> RecallExperiment:
    point, lr = setting
    return plane.experiment(optimizer, d_k, (point_arm(d_k, point, optimizer),), (lr,),
                            plane.confirm_seeds)


@memo
def run_plane(plane: Plane) -> dict[tuple[Optimizer, int], PlaneResult]:
    """Measure the plane at every (optimiser, d_k); choose on the choice seeds and confirm
    on the fresh ones. One ensemble per (optimiser, d_k) and stage, split between the
    processes that ask for the plane (:func:`sdpa.runtime.each`). Memoised."""
    keys = [(opt, d_k) for d_k in plane.d_ks for opt in plane.optimizers]
    sweeps = [s for (s,) in each(run_recalls, [((plane.sweep(*key),),) for key in keys])]
    chance = math.log(sweeps[0].experiment.n_values)
    losses = [final_loss(s.metrics, plane.last, chance) for s in sweeps]  # (points, lrs, seeds)
    chosen = [_choose(plane, *key, loss) for key, loss in zip(keys, losses)]
    confirms = each(run_recalls, [
        (tuple(_confirmation(plane, *key, name, settings[name]) for name in SETTINGS),)
        for key, settings in zip(keys, chosen)])
    out = {key: PlaneResult(
        optimizer=key[0], d_k=key[1], points=plane.points(*key), lrs=plane.lrs(key[0]), loss=loss,
        chance=chance, settings=settings,
        confirm={name: final_loss(c.metrics, plane.last, chance)[0, 0]
                 for name, c in zip(SETTINGS, confirm)})
        for key, loss, settings, confirm in zip(keys, losses, chosen, confirms)}
    return {(opt, d_k): out[(opt, d_k)] for opt in plane.optimizers for d_k in plane.d_ks}


# ------------------------------------------------------------------ the starting spread


#: Starting spreads to match, by name: the std of an unscaled logit at initialisation, for
#: heads of 64 (128 for the 7B model). GPT-2's N(0, 0.02^2) at three widths
#: (:func:`sdpa.language.logit_spread`), PyTorch's ``nn.Linear`` default (component
#: variance 1/3, so sqrt(d_k) / 3) and unit variance (sqrt(d_k)).
NAMED_SPREADS: tuple[tuple[str, float], ...] = (
    ("GPT-2's init at the full build's language model (d_model 128)", logit_spread(128, 64)),
    ("GPT-2 small (d_model 768)", logit_spread(768, 64)),
    ("PyTorch's nn.Linear default", math.sqrt(64) / 3),
    ("unit variance", math.sqrt(64)),
    ("a 7B model (d_model 4096, d_k 128)", logit_spread(4096, 128)),
)


@dataclass(frozen=True)
class SpreadStudy:
    """Dropping the factor at each starting spread: the unscaled head and the 1/sqrt(d_k)
    head from the same weights, W_Q and W_K drawn m times their unit-variance draw, so that
    the unscaled logits start with standard deviation ``spread`` (a^2 sqrt(d_k) = spread).

    Each rule is tuned alike: its shared rate over the plane's window and its W_Q/W_K rate
    multiplier over d_k^(-w/4), w in ``w_steps``, around its own default (1), on the
    plane's choice seeds; the best setting is rerun on the fresh seeds, where the two rules
    are compared seed by seed. What is matched is the logits' spread at the start; the
    rest of the head (W_V, W_O) starts as the plane's does.
    """

    plane: Plane = Plane()
    d_k: int = 64
    optimizer: Optimizer = "adam"
    spreads: tuple[float, ...] = (0.1, 1.0, 10.0)
    named: tuple[tuple[str, float], ...] = NAMED_SPREADS
    w_steps: tuple[int, ...] = (0,)

    @property
    def all_spreads(self) -> tuple[float, ...]:
        return tuple(sorted({*self.spreads, *(x for _, x in self.named)}))

    def m(self, spread: float) -> float:
        return math.sqrt(spread / math.sqrt(self.d_k))

    def arms(self, rule: Scale, spread: float) -> tuple[Arm, ...]:
        m = self.m(spread)
        return tuple(Arm(rule, q_init=m, k_init=m, lr_q=multiplier(self.d_k, j),
                         lr_k=multiplier(self.d_k, j)) for j in self.w_steps)


@dataclass(frozen=True)
class SpreadResult:
    """Per spread: each rule's confirmed final loss (fresh seeds) at its chosen setting."""

    study: SpreadStudy
    spreads: tuple[float, ...]
    chosen: dict[tuple[Scale, float], tuple[Arm, float]]  # (rule, spread) -> (arm, rate)
    confirm: dict[tuple[Scale, float], torch.Tensor]  # (rule, spread) -> (confirm seeds,)


@memo
def run_spreads(study: SpreadStudy) -> SpreadResult:
    """Tune both rules at every spread on the choice seeds, then confirm. One ensemble per
    stage. Memoised."""
    p, rules = study.plane, (Scale.NONE, Scale.INV_SQRT)
    keys = [(rule, x) for x in study.all_spreads for rule in rules]
    lrs = p.lrs(study.optimizer)
    sweeps = run_recalls(tuple(p.experiment(study.optimizer, study.d_k, study.arms(*key), lrs,
                                            p.choose_seeds) for key in keys))
    chance = math.log(sweeps[0].experiment.n_values)
    chosen = {}
    for key, sweep in zip(keys, sweeps):
        log_loss = final_loss(sweep.metrics, p.last, chance).log().mean(-1)  # (arms, lrs)
        a, i = divmod(int(log_loss.argmin()), len(lrs))
        chosen[key] = (sweep.experiment.arms[a], lrs[i])
    confirms = run_recalls(tuple(p.experiment(study.optimizer, study.d_k, (arm,), (lr,),
                                              p.confirm_seeds) for arm, lr in chosen.values()))
    return SpreadResult(study=study, spreads=study.all_spreads, chosen=chosen, confirm={
        key: final_loss(c.metrics, p.last, chance)[0, 0] for key, c in zip(keys, confirms)})


# ------------------------------------------------------------------ the identity


def identity_runs(plane: Plane, optimizer: Optimizer, d_k: int, rule: Scale = Scale.INV_SQRT,
                  seed: int = 0, eps: float = 1e-8, lr: float | None = None,
                  clip: float | None = None,
                  norms: list | None = None) -> tuple[list[float], list[float]]:
    """The identity the plane rests on, run by the plain loop (:func:`sdpa.training.train`):
    the losses of ``rule``'s default and of the unscaled head at its point of the plane,
    from the same draw and data, at the shared rate ``lr`` of ``optimizer`` (default: the
    plane's first).

    Under Adam the unscaled head's W_Q and W_K get epsilon divided by sqrt(c) (their
    gradients are 1/sqrt(c) times larger); under SGD nothing changes but the rates.
    ``clip``: both runs clip the global gradient norm to it before each step, which the
    identity does not survive wherever the clip binds (the two heads' gradients have other
    norms). ``norms``, if given, receives the rule's run's global gradient norm at every step
    (before any clip), to tell whether a clip binds.
    """
    lr = plane.lrs(optimizer)[0] if lr is None else lr
    experiment = plane.experiment(optimizer, d_k, (Arm(rule),), (lr,), (seed,))
    point = plane_arm(d_k, rule_step(rule, optimizer))
    c = rule.factor(d_k)
    out = []
    for arm, qk_eps in ((Arm(rule), eps), (point, eps / math.sqrt(c))):
        model = recall_model(experiment, arm, seed)
        rates = member_lrs(arm, experiment.lrs[0], [n for n, _ in model.named_parameters()])
        groups = [{"params": [model.get_parameter(n)], "lr": lr,
                   **({"eps": qk_eps if n in ("W_Q.weight", "W_K.weight") else eps}
                      if optimizer == "adam" else {})}
                  for n, lr in rates.items() if lr is not None]
        optimizer_ = make_optimizer(optimizer, groups)
        data = recall_batches(experiment.task, seed, experiment.steps)
        batches = ((*data.tokens(t), data.target[t]) for t in range(experiment.steps))
        measure = None
        if norms is not None and not out:  # the rule's own run
            def measure(*_, model=model):
                norms.append(torch.linalg.vector_norm(torch.stack(
                    [p.grad.norm() for p in model.parameters() if p.grad is not None])).item())
        out.append(train(model, optimizer_, batches, recall_loss, schedule(experiment, optimizer_),
                         measure=measure, clip=clip))
    return out[0], out[1]
