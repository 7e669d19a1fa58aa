"""The transfer page's predictions: how a rule's best learning rate should move with d_k.

The measured best rates are the plane's (:mod:`sdpa.plane`): each rule's default at its
best shared rate.
"""

from __future__ import annotations

from sdpa.attention import Scale
from sdpa.recall import Optimizer

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
