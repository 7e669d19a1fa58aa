"""Plotting helpers the training pages share: one colour per scale rule, and their panel grids.

The science modules (:mod:`sdpa.recall`, :mod:`sdpa.gpt`, :mod:`sdpa.studies`) return
plain results and draw nothing; the functions here draw those results on matplotlib axes
that :class:`sdpa.figures.Figure` provides, in the site's colours.
"""

from __future__ import annotations

from collections.abc import Callable

from sdpa.attention import Scale
from sdpa.figures import INK, PALETTE
from sdpa.recall import Optimizer, RecallHistory
from sdpa.studies import TunedArm
from sdpa.training import OPTIMIZER_LABELS



#: The colour of each scale rule in every figure of the site.
SCALE_COLORS = {Scale.NONE: 3, Scale.INV_SQRT: 0, Scale.INV: 2}  # indices into sdpa.PALETTE


def draw_ablation(axes, runs: dict[tuple[Optimizer, int], RecallHistory], metric: str,
                  ylabel: str, reference: tuple[float, str] | None = None) -> None:
    """Plot ``metric`` of :func:`sdpa.studies.run_ablation` on a grid (rows: optimisers,
    columns: d_k).

    Unit init: mean line and min-max band over seeds; default init: dashed mean.
    ``reference`` is an optional (y, label) dotted line, e.g. chance. One legend for the
    whole figure goes below the panels.
    """
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
def draw_tuning(ax, arms: list[TunedArm], ceiling: float, chance: float) -> None:
    """One panel of final loss against learning rate for the ``arms`` of a tuning.

    Per arm: the sweep's mean over seeds (line) and range (band), runs above ``ceiling``
    (or diverged) drawn at it; the confirmation at the best rate (filled marker, mean and
    range); the sweep's mean at the ablation's fixed rate (open marker). A dotted line at
    chance.
    """
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
