"""Plotting helpers the training pages share: one colour per scale rule, and their panel grids.

The science modules (:mod:`sdpa.recall`, :mod:`sdpa.gpt` and the studies built on them)
return plain results and draw nothing; the functions here draw those results on matplotlib axes
that :class:`sdpa.figures.Figure` provides, in the site's colours.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from matplotlib.colors import LinearSegmentedColormap, LogNorm

from sdpa.attention import Scale
from sdpa.figures import INK, PALETTE
from sdpa.recall import Optimizer, RecallHistory
from sdpa.plane import PlaneResult, rule_step
from sdpa.training import OPTIMIZER_LABELS


#: The colour of each scale rule in every figure of the site.
SCALE_COLORS = {Scale.NONE: 3, Scale.INV_SQRT: 0, Scale.INV: 2}  # indices into sdpa.PALETTE


def draw_ablation(axes, runs: dict[tuple[Optimizer, int], RecallHistory], metric: str,
                  ylabel: str, reference: tuple[float, str] | None = None) -> None:
    """Plot ``metric`` of :func:`sdpa.ablation.run_ablation` on a grid (rows: optimisers,
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


#: The plane's colours: low loss blue, high loss red, through gold (the site's palette).
LOSS_COLORS = LinearSegmentedColormap.from_list("loss", [PALETTE[0], PALETTE[5], PALETTE[3]])
#: The markers of the rules' defaults and of the plane's best point.
RULE_MARKERS = {Scale.NONE: "o", Scale.INV_SQRT: "^", Scale.INV: "s"}


def draw_plane(ax, result: PlaneResult, norm: LogNorm):
    """One (optimiser, d_k) of the plane: each point's final loss at its best shared rate
    (a square per point, coloured on ``norm``), the rules' defaults (outlined markers) and
    the choice seeds' best point (a star). Axes in steps of d_k^(-1/4): u (W_Q and W_K
    start at d_k^(-u/4) times their unit-variance draw) right, w (they learn at d_k^(-w/4)
    times the shared rate) up.
    Returns the squares (for a colour bar)."""
    u, w = zip(*result.points)
    loss = result.surface.exp().tolist()  # geometric mean over the choice seeds
    squares = ax.scatter(u, w, c=loss, cmap=LOSS_COLORS, norm=norm, marker="s", s=260,
                         label="final loss at the best shared rate")
    for rule, marker in RULE_MARKERS.items():
        point = rule_step(rule, result.optimizer)
        ax.scatter(*point, marker=marker, s=70, facecolors="none", edgecolors=INK, lw=1.2,
                   label=f"{rule.label}: its default")
    ax.scatter(*result.settings["best"][0], marker="*", s=90, color=INK, label="best point")
    ax.set_xticks(sorted(set(u)))
    ax.set_yticks(sorted(set(w)))
    ax.margins(0.12)
    return squares


def loss_norm(results) -> LogNorm:
    """One colour scale for the planes of ``results``: their best to their worst point."""
    values = [v for r in results for v in r.surface.exp().tolist() if math.isfinite(v)]
    return LogNorm(vmin=min(values), vmax=max(values))


def draw_planes(axes, plane, results: dict) -> None:
    """Every (optimiser, d_k) of ``plane`` whose whole grid was measured, one panel each
    (rows: optimisers, columns: d_k), on one colour scale, with one colour bar and one
    legend for the figure."""
    axes = np.asarray(axes).reshape(len(plane.optimizers), len(plane.grid_d_ks))
    norm = loss_norm([results[(o, d)] for o in plane.optimizers for d in plane.grid_d_ks])
    for row, optimizer in zip(axes, plane.optimizers):
        for ax, d_k in zip(row, plane.grid_d_ks):
            squares = draw_plane(ax, results[(optimizer, d_k)], norm)
            ax.set_title(f"{OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}")
            ax.set(xlabel="u: W_Q, W_K start × d_k^(−u/4)", ylabel="w: their rate × d_k^(−w/4)")
    figure = axes[0][0].figure
    figure.colorbar(squares, ax=axes, shrink=0.8).set_label("final loss (nats)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles[1:], labels[1:], loc="outside lower center", ncols=4, fontsize=7.5)
