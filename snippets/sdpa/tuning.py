"""The tuned-comparisons page's other studies: speed apart from capability (each budget
re-tuned), and a learned logit scale at learning rates above the best.

Both start from the plane's setup (:class:`sdpa.plane.Plane`): the recall task, the model,
the warm-up and cosine schedule, the shared rates and the seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sdpa.ablation import final_loss
from sdpa.attention import Scale
from sdpa.plane import Plane, PlaneResult, point_arm, run_plane
from sdpa.recall import Arm, Optimizer, RecallExperiment, run_recalls
from sdpa.runtime import each, memo
from sdpa.stats import chance_note, paired
from sdpa.training import OPTIMIZER_LABELS

# ------------------------------------------------------------------ what the factor buys


def unscaled_reading(plane: Plane) -> str:
    """The unscaled start against the 1/sqrt(d_k) default, per optimiser and head size, in
    words the intervals of this build decide (fresh seeds, paired by seed, each rule at its
    own best shared rate): the unscaled default, and where the whole grid was measured, the
    best point of the u = 0 column (the unscaled start, its W_Q/W_K rate tuned)."""
    lines, intervals = [], 0
    for (optimizer, d_k), r in run_plane(plane).items():
        default = paired(r.confirm["none"], r.confirm["inv_sqrt"], log=True)
        said = [f"the unscaled default {default.compared()}"]
        if d_k in plane.grid_d_ks:
            column = paired(r.confirm["column"], r.confirm["inv_sqrt"], log=True)
            said.append(f"the best point of the u = 0 column {column.compared()}")
        intervals += len(said)
        lines.append(f"- {OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}: {'; '.join(said)}")
    return ("Without the factor, against the 1/√d_k default (this build: "
            f"{len(plane.confirm_seeds)} fresh seeds, paired by seed, 95% t intervals of the "
            f"ratio of the final losses; {chance_note(intervals)}):\n\n" + "\n".join(lines)
            + "\n")


# ------------------------------------------------------------------ speed or capability


@dataclass(frozen=True)
class BudgetStudy:
    """Is "ends higher after 150 steps" about speed or about what a head can learn?

    At every budget of ``budgets`` (steps, each with the plane's warm-up fraction and a
    cosine decay to zero over that budget), each rule's default and the plane's best point
    (chosen at the plane's own budget) are re-tuned: shared rates 10^(k / per_decade) times
    the rate the plane chose for that setting, k in ``shifts`` (a longer run tends to want
    a lower peak rate), on the choice seeds, the best rerun on the fresh seeds. The plane
    itself is the first budget. Only the shared rate is re-tuned: every setting keeps the
    point (u, w) it had at the plane's budget.
    """

    plane: Plane = Plane()
    budgets: tuple[int, ...] = (600,)
    d_ks: tuple[int, ...] = (64,)
    optimizers: tuple[Optimizer, ...] = ("adam", "sgd")
    shifts: tuple[int, ...] = (-3, -2, -1, 0, 1)
    settings: tuple[str, ...] = ("none", "inv_sqrt", "inv", "best")

    def lrs(self, tuned: PlaneResult, name: str) -> tuple[float, ...]:
        """The shared rates a setting sweeps at the longer budgets, around the rate the plane
        chose for it (``tuned``: the plane's result for an optimiser and d_k)."""
        _, lr = tuned.settings[name]
        return tuple(lr * 10 ** (k / self.plane.per_decade) for k in self.shifts)

    def arms(self, tuned: PlaneResult) -> dict[str, Arm]:
        """The arms re-tuned at each budget, by setting name (:data:`sdpa.plane.SETTINGS`)."""
        best, _ = tuned.settings["best"]
        arms = {"none": Arm(Scale.NONE), "inv_sqrt": Arm(Scale.INV_SQRT),
                "inv": Arm(Scale.INV), "best": point_arm(tuned.d_k, best, tuned.optimizer)}
        return {name: arms[name] for name in self.settings}


@dataclass(frozen=True)
class BudgetRun:
    """One setting re-tuned at one budget: its chosen rate and its loss on fresh seeds."""

    lr: float
    choose_loss: torch.Tensor  # (lrs,) mean log final loss on the choice seeds
    confirm: torch.Tensor  # (confirm seeds,) final loss at the chosen rate
    interior: bool  # the chosen rate lies strictly inside the window

    @property
    def stability(self) -> bool:
        """Whether the next rate up diverged on a choice seed: the chosen rate is then the
        fastest that trains, a stability limit rather than an optimum."""
        i = int(self.choose_loss.argmin())
        return i + 1 < len(self.choose_loss) and not bool(torch.isfinite(self.choose_loss[i + 1]))


@memo
def run_budgets(study: BudgetStudy) -> dict[tuple[int, Optimizer, int, str], BudgetRun]:
    """Every (budget, optimiser, d_k, setting): re-tuned and confirmed. The plane's own
    budget is read from :func:`sdpa.plane.run_plane`; each longer budget, d_k and optimiser
    is one ensemble per stage, split between the processes that ask for the study
    (:func:`sdpa.runtime.each`). Memoised."""
    p, planes = study.plane, run_plane(study.plane)
    out = {}
    for (optimizer, d_k), result in planes.items():
        if d_k in study.d_ks and optimizer in study.optimizers:
            for name in study.settings:
                point, lr = result.settings[name]
                out[(p.steps, optimizer, d_k, name)] = BudgetRun(
                    lr=lr, choose_loss=result.log_loss[result.points.index(point)],
                    confirm=result.confirm[name], interior=result.interior(name))
    # one ensemble per (budget, d_k, optimiser) and stage: its settings' arms
    groups = [(steps, d_k, opt) for steps in study.budgets for d_k in study.d_ks
              for opt in study.optimizers]
    keys = [(*group, name, arm, study.lrs(planes[group[2], group[1]], name)) for group in groups
            for name, arm in study.arms(planes[group[2], group[1]]).items()]

    def calls(seeds, rates):  # each group's experiments, one ensemble each, in keys' order
        return [(tuple(p.experiment(opt, d_k, (arm,), rates(lrs, k), seeds, steps)
                       for k, (steps, d_k, opt, _, arm, lrs) in enumerate(keys)
                       if (steps, d_k, opt) == group),) for group in groups]

    ran = each(run_recalls, calls(p.choose_seeds, lambda lrs, k: lrs))
    sweeps = [history for histories in ran for history in histories]
    chance = math.log(sweeps[0].experiment.n_values)
    choose = [final_loss(s.metrics, p.last, chance)[0].log().mean(-1) for s in sweeps]
    picks = [int(c.argmin()) for c in choose]
    ran = each(run_recalls, calls(p.confirm_seeds, lambda lrs, k: (lrs[picks[k]],)))
    confirms = [history for histories in ran for history in histories]
    for (steps, d_k, opt, name, _, lrs), c, i, confirm in zip(keys, choose, picks, confirms):
        out[(steps, opt, d_k, name)] = BudgetRun(
            lr=lrs[i], choose_loss=c, confirm=final_loss(confirm.metrics, p.last, chance)[0, 0],
            interior=0 < i < len(c) - 1)
    return out


# ------------------------------------------------------------------ a learned temperature


@dataclass(frozen=True)
class LearnedScaleStudy:
    """A learned logit scale against the fixed 1/sqrt(d_k), at learning rates above the best.

    The learned arm starts at c = 1/sqrt(d_k) and learns log c with the weights (same
    optimiser and rate, no weight decay or other regularisation). The plane's setup at one
    head dimension, at ``above`` grid steps over the shared rate the plane chose for the
    1/sqrt(d_k) default, on the plane's fresh seeds; both arms and both optimisers train as
    one ensemble.
    """

    plane: Plane = Plane()
    d_k: int = 64
    above: tuple[int, ...] = (1, 2)
    fixed: Arm = Arm(Scale.INV_SQRT)
    learned: Arm = Arm(Scale.INV_SQRT, learn_scale=True)

    def rates(self, tuned: PlaneResult) -> tuple[float, ...]:
        """The rates, ``above`` grid steps over the plane's best for 1/sqrt(d_k) (``tuned``:
        the plane's result for an optimiser at this d_k)."""
        _, best = tuned.settings["inv_sqrt"]
        return tuple(best * 10 ** (k / self.plane.per_decade) for k in self.above)

    def experiments(self, planes: dict) -> tuple[RecallExperiment, ...]:
        """One experiment per optimiser, to train together with :func:`run_recalls`
        (``planes``: :func:`sdpa.plane.run_plane`'s results)."""
        return tuple(self.plane.experiment(opt, self.d_k, (self.fixed, self.learned),
                                           self.rates(planes[opt, self.d_k]),
                                           self.plane.confirm_seeds)
                     for opt in self.plane.optimizers)


# ------------------------------------------------------------------ the starting spread, drawn


def draw_costs(ax, spreads, intervals, color) -> None:
    """What dropping the factor costs against the starting spread: each interval (an
    :class:`sdpa.stats.Interval` of the loss without minus with the factor) at its spread,
    on a log axis, with zero dotted."""
    from sdpa.style import INK

    ax.errorbar(spreads, [i.mean for i in intervals], fmt="o-", color=color, ms=4, capsize=2,
                yerr=[[i.mean - i.low for i in intervals], [i.high - i.mean for i in intervals]])
    ax.axhline(0, color=INK, lw=0.8, ls=":")
    ax.set(xscale="log", xlabel="std of the unscaled logits at initialisation",
           ylabel="loss without − with 1/√d_k (nats)")
