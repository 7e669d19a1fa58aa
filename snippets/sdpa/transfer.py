"""The transfer page's predictions: how a rule's best learning rate should move with d_k.

The measured best rates are the plane's (:mod:`sdpa.plane`): each rule's default at its
best shared rate.
"""

from __future__ import annotations

from sdpa.attention import Scale
from sdpa.plane import Plane
from sdpa.recall import Arm, Optimizer, recall_at_init
from sdpa.runtime import memo

#: What the best learning rate keeps the same from one scale rule to the next, in the two
#: hypotheses of the tuning page: W_Q and W_K move by the same fraction of their size per
#: step ("weights"), or the logits move by the same amount per step ("logits").
INVARIANTS = ("weights", "logits")


def predicted_lr_exponent(optimizer: Optimizer, rule: Scale, invariant: str,
                          gradient_slope: float | None = None) -> float:
    """How the best learning rate of ``rule`` should move with d_k, relative to 1/sqrt(d_k)'s,
    if the best rate keeps ``invariant`` the same (one of :data:`INVARIANTS`).

    A rule's factor c is d_k^alpha times s = 1/sqrt(d_k) (alpha = 1/2 for none, -1/2 for
    1/d_k), and every rule starts W_Q and W_K from the same draw. One step at rate lr moves
    W_Q and W_K by about lr under Adam (whatever their gradient's size) and by g lr under
    SGD, g the ratio of their gradients to the 1/sqrt(d_k) head's; the logits, c/s times
    more sensitive to W_Q and W_K, move c/s times further. Keeping the weights' step fixed
    gives the exponent 0 (Adam) or -slope(g) (SGD); keeping the logits' step fixed gives
    -alpha (Adam) or -(alpha + slope(g)) (SGD).

    If the loss's gradient at the logits did not depend on the factor, g would be c/s and
    its slope alpha (the default). Saturation breaks that: ``gradient_slope`` takes the
    measured slope of g against d_k instead (:func:`gradient_ratios`).
    """
    if invariant not in INVARIANTS:
        raise ValueError(f"invariant must be one of {INVARIANTS}, not {invariant!r}")
    alpha = {Scale.NONE: 0.5, Scale.INV_SQRT: 0.0, Scale.INV: -0.5}[rule]
    g = alpha if gradient_slope is None else gradient_slope
    weights = 0.0 if optimizer == "adam" else g  # the weights' step per unit rate, as d_k^x
    return 0.0 - (weights if invariant == "weights" else weights + alpha)  # (0.0 - 0.0 is +0)


@memo
def gradient_ratios(plane: Plane, n_batches: int = 8) -> dict[Scale, dict[int, float]]:
    """g at initialisation: each rule's |grad W_Q| over the 1/sqrt(d_k) head's, from the same
    weights and batches, at every d_k of ``plane`` (its setup and choice seeds; the mean
    over seeds of the ratio of the mean norms over ``n_batches`` batches)."""
    out: dict[Scale, dict[int, float]] = {rule: {} for rule in Scale}
    for d_k in plane.d_ks:
        experiment = plane.experiment("sgd", d_k, tuple(Arm(rule) for rule in Scale),
                                      plane.lrs("sgd")[:1], plane.choose_seeds)
        grad_q = recall_at_init(experiment, n_batches).metrics.grad_q[0, :, 0]  # (rules, seeds)
        for rule in Scale:
            out[rule][d_k] = (grad_q[list(Scale).index(rule)]
                              / grad_q[list(Scale).index(Scale.INV_SQRT)]).mean().item()
    return out
