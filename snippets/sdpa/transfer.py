"""The transfer page's predictions and measurements: how a rule's best learning rate moves
with d_k.

The measured best rates are the plane's (:mod:`sdpa.plane`): each rule's default at its
best shared rate, between grid rates (:func:`vertex`), from the choice seeds' mean and from
each choice seed alone (so that a slope gets a t interval over seeds). The gradient ratio
that the SGD prediction needs is measured at initialisation (:func:`gradient_ratios`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from sdpa.attention import Scale
from sdpa.plane import EXPONENTS, Plane, PlaneResult, below_divergence, rule_step, run_plane
from sdpa.recall import Arm, Optimizer, recall_at_init
from sdpa.runtime import memo
from sdpa.stats import Interval, t_interval

#: What the best learning rate keeps the same from one scale rule to the next, in the two
#: hypotheses of the tuning page: W_Q and W_K move by the same fraction of their size per
#: step ("weights"), or the logits move by the same amount per step ("logits").
INVARIANTS = ("weights", "logits")


def predicted_lr_exponent(optimizer: Optimizer, rule: Scale, invariant: str,
                          gradient_slope: float | None = None) -> float:
    """How the best learning rate of ``rule`` should move with d_k, relative to 1/sqrt(d_k)'s,
    if the best rate keeps ``invariant`` the same (one of :data:`INVARIANTS`).

    A rule's factor is c = d_k^(-alpha) (:data:`sdpa.plane.EXPONENTS`), so c/s =
    d_k^(1/2 - alpha) over s = 1/sqrt(d_k) (+1/2 for none, -1/2 for 1/d_k), and every rule
    starts W_Q and W_K from the same draw. One step at rate lr moves W_Q and W_K by about lr
    under Adam (whatever their gradient's size) and by G lr under SGD, G the ratio of their
    gradients to the 1/sqrt(d_k) head's; the logits, c/s times more sensitive to W_Q and
    W_K, move c/s times further. Keeping the weights' step fixed gives the exponent 0 (Adam)
    or -slope(G) (SGD); keeping the logits' step fixed gives -(1/2 - alpha) (Adam) or
    -(slope(G) + 1/2 - alpha) (SGD).

    If the loss's gradient at the logits did not depend on the factor, G would be c/s and
    its slope 1/2 - alpha (the default). Saturation breaks that: ``gradient_slope`` takes the
    measured slope of G against d_k instead (:func:`gradient_ratios`).
    """
    if invariant not in INVARIANTS:
        raise ValueError(f"invariant must be one of {INVARIANTS}, not {invariant!r}")
    excess = 0.5 - EXPONENTS[rule]  # c/s = d_k^excess
    g = excess if gradient_slope is None else gradient_slope
    weights = 0.0 if optimizer == "adam" else g  # the weights' step per unit rate, as d_k^x
    return 0.0 - (weights if invariant == "weights" else weights + excess)  # (0.0 - 0.0 is +0)


def vertex(curve: torch.Tensor, lrs: tuple[float, ...]) -> float:
    """The best rate between grid rates: the vertex of the parabola through the log loss
    ``curve`` at its best rate and its two neighbours, in log rate (the grid rate itself at
    the window's edge or next to a diverged run)."""
    i = int(curve.argmin())
    if not 0 < i < len(lrs) - 1 or not torch.isfinite(curve[i - 1: i + 2]).all():
        return lrs[i]
    left, mid, right = curve[i - 1: i + 2].tolist()
    shift = 0.5 * (left - right) / (left - 2 * mid + right)  # in grid steps, |.| <= 1/2
    return lrs[i] * (lrs[i + 1] / lrs[i]) ** shift


def best_rates(result: PlaneResult, point: tuple[int, int]) -> tuple[float, list[float]]:
    """The best shared rate at ``point``: from the choice seeds' mean log loss, and from
    each choice seed's own log loss."""
    loss = result.loss[result.points.index(point)].log()  # (lrs, choose seeds)
    return (vertex(loss.mean(-1), result.lrs),
            [vertex(loss[:, s], result.lrs) for s in range(loss.shape[-1])])


def best_limit(result: PlaneResult, point: tuple[int, int]) -> str:
    """What bounds the best shared rate at ``point`` (the choice seeds' mean): ``"edge"``
    when it is the first or last rate of the window (the best may lie beyond),
    ``"stability"`` when the next rate up diverged on a choice seed (the best is the fastest
    rate that trains: a stability limit, not an optimum between slower and faster rates),
    else ``""``."""
    loss = result.loss[result.points.index(point)]  # (lrs, choose seeds), inf where diverged
    i = int(loss.log().mean(-1).argmin())
    if i in (0, len(result.lrs) - 1):
        return "edge"
    return "stability" if below_divergence(loss, i) else ""


def rate_change(plane: Plane, optimizer: Optimizer) -> Interval | None:
    """Does one rate serve every head size under 1/sqrt(d_k)? Its best shared rate at the
    plane's largest d_k over its best at the smallest, choice seed by choice seed: the t
    interval of the log ratio (None when the plane measured one head size)."""
    if len(plane.d_ks) < 2:
        return None
    planes, point = run_plane(plane), rule_step(Scale.INV_SQRT, optimizer)
    first, last = (best_rates(planes[(optimizer, d)], point)[1]
                   for d in (plane.d_ks[0], plane.d_ks[-1]))
    return t_interval([math.log(b / a) for a, b in zip(first, last)])


def slope(d_ks, values) -> float:
    """The least-squares slope of log(value) against log(d_k)."""
    return round(float(np.polyfit(np.log(d_ks), np.log(values), 1)[0]), 6)


def slope_interval(d_ks, per_seed: list[list[float]]) -> Interval:
    """The t interval of a slope fitted seed by seed: ``per_seed[i][s]`` is seed s's value
    at ``d_ks[i]``."""
    return t_interval([slope(d_ks, values) for values in zip(*per_seed)])


#: The head sizes and the number of seeds the gradient ratio is measured at (at initialisation).
GRADIENT_D_KS = (16, 64, 256)


@memo
def gradient_ratios(plane: Plane, d_ks: tuple[int, ...] = GRADIENT_D_KS,
                    n_batches: int = 8) -> dict[Scale, dict[int, torch.Tensor]]:
    """G at initialisation: each rule's |grad W_Q| over the 1/sqrt(d_k) head's, from the same
    weights and batches, at every d_k of ``d_ks``, on every seed of ``plane`` (choice and
    fresh): per seed, the ratio of the mean norms over ``n_batches`` batches."""
    seeds = (*plane.choose_seeds, *plane.confirm_seeds)
    out: dict[Scale, dict[int, torch.Tensor]] = {rule: {} for rule in Scale}
    for d_k in d_ks:
        experiment = plane.experiment("sgd", d_k, tuple(Arm(rule) for rule in Scale),
                                      plane.lrs("sgd")[:1], seeds)
        grad_q = recall_at_init(experiment, n_batches).metrics.grad_q[0, :, 0]  # (rules, seeds)
        for i, rule in enumerate(Scale):
            out[rule][d_k] = grad_q[i] / grad_q[list(Scale).index(Scale.INV_SQRT)]
    return out


def gradient_slope(ratios: dict[int, torch.Tensor]) -> tuple[float, Interval]:
    """The slope of G against d_k: from the seeds' geometric mean, and its t interval over
    the seeds' own slopes."""
    d_ks = tuple(ratios)
    mean = slope(d_ks, [math.exp(ratios[d].log().mean().item()) for d in d_ks])
    return mean, slope_interval(d_ks, [ratios[d].tolist() for d in d_ks])
