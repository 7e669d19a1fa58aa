"""How large every study is in the two profiles, written once.

``SDPA_PROFILE`` picks the profile (:func:`sdpa.runtime.profile`): ``quick`` is the default
on a CPU or a GPU (CI, ``mkdocs serve``, the tests), ``full`` (``SDPA_PROFILE=full``) what
the published site is built with. :func:`sizes` returns the current profile's :class:`Sizes`;
every snippet takes its studies from it, so one snippet runs at either size. The language
model's two sizes are :data:`sdpa.language.SIZES`, beside its study.

What the full profile adds, and why:

* five seeds where the quick build has two or three (the QK-norm sweep; the failure-modes
  ablation and the temperature study have five in both), and at least five fresh seeds for
  every tuned setting it confirms (the choices themselves rest on three choice seeds);
* the whole W_Q/W_K plane (5 x 8 points under each optimiser, w from -2 under Adam and
  -1 under SGD: the unscaled start's best W_Q/W_K rate can be faster than the shared rate)
  at d_k = 16, 64 and 256, where the quick build measures a 3 x 3 grid at d_k = 64 alone;
  eight shared rates per point where it has three; choices on three seeds and
  confirmations on seven fresh ones (quick: two and seven);
* the 4-head block's plane at d_k = 16 and 64 under both optimisers (quick: the rules'
  defaults at d_k = 16, Adam);
* budgets of 600 and 3,000 steps, the shared rate re-tuned, at d_k = 64 under both
  optimisers (quick: 600 steps, Adam, 1/d_k left out): they print what they measure and
  carry no claim, and their 3,000-step runs are the costliest of the tuning page;
* the practice page's recall block split into 1 to 8 heads, trained (quick: not run);
* the starting spread at ten points, each rule with its own W_Q/W_K rate tuned too (quick:
  three of the named spreads, the shared rate alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from sdpa.ablation import Ablation
from sdpa.gpt import GPTSweep
from sdpa.plane import NAMED_SPREADS, Plane, SpreadStudy
from sdpa.practice import HeadCountStudy
from sdpa.qk_norm import QK_NORM_ARMS
from sdpa.runtime import profile
from sdpa.temperature import TemperatureStudy
from sdpa.tuning import BudgetStudy, LearnedScaleStudy

__all__ = ["SIZES", "Sizes", "sizes"]


@dataclass(frozen=True)
class Sizes:
    """One profile's studies."""

    ablation: Ablation
    temperature: TemperatureStudy
    qk_norm: GPTSweep
    plane: Plane  # the one-head recall task
    block_plane: Plane  # the 4-head block
    spreads: SpreadStudy
    budgets: BudgetStudy
    learned_scale: LearnedScaleStudy
    head_count: HeadCountStudy | None  # the practice page's block split into more heads


_FIVE = tuple(range(5))
#: seven fresh seeds: on five, the lower end of the unscaled start's interval against 1/sqrt(d_k)
#: under Adam had a margin of 2.7 standard deviations over ten independent seed blocks
_QUICK_PLANE = Plane(d_ks=(64,), rates=3, confirm_seeds=tuple(range(2, 9)))
_FULL_PLANE = Plane(
    grid_d_ks=(16, 64, 256), u_steps=(0, 1, 2, 3, 4),
    w_steps=(("adam", (-2, -1, 0, 1, 2, 3, 4, 5)), ("sgd", (-1, 0, 1, 2, 3, 4, 5, 6))),
    rates=8,
    centres=(("adam", -5), ("sgd", -1)), choose_seeds=(0, 1, 2), confirm_seeds=tuple(range(3, 10)))
#: The block learns best at lower shared rates than one head (its W_O and readout are wider)
_FULL_BLOCK = Plane(
    heads=4, d_ks=(16, 64), grid_d_ks=(16, 64), u_steps=(0, 1, 2, 3, 4),
    w_steps=(("adam", (0, 1, 2, 3, 4)), ("sgd", (0, 1, 2, 3, 4, 5, 6))), rates=7,
    centres=(("adam", -6), ("sgd", -1)), choose_seeds=(0, 1, 2), confirm_seeds=tuple(range(3, 10)))

SIZES: dict[str, Sizes] = {
    "quick": Sizes(
        # five seeds, as in the full build: on three, "every seed" words and the ratio of two
        # means had margins of 1.2-2.7 standard deviations over ten independent seed blocks
        ablation=Ablation(seeds=_FIVE),
        # five seeds, as in the full build: on three, the scaled head's rise in trained logits had a
        # margin of 2.9 standard deviations over sixteen independent seed blocks (73-88)
        temperature=TemperatureStudy(seeds=_FIVE),
        qk_norm=GPTSweep(arms=tuple(QK_NORM_ARMS.values())),
        plane=_QUICK_PLANE,
        block_plane=Plane(heads=4, d_ks=(16,), grid_d_ks=(), optimizers=("adam",), rates=3,
                          confirm_seeds=_QUICK_PLANE.confirm_seeds),
        spreads=SpreadStudy(plane=_QUICK_PLANE, spreads=(), named=tuple(
            NAMED_SPREADS[i] for i in (0, 3, 4))),  # the narrowest, unit variance, the widest
        budgets=BudgetStudy(plane=_QUICK_PLANE, budgets=(600,), d_ks=(64,), optimizers=("adam",),
                            shifts=(-2, -1, 0), settings=("none", "inv_sqrt", "best")),
        learned_scale=LearnedScaleStudy(plane=_QUICK_PLANE),
        head_count=None,
    ),
    "full": Sizes(
        ablation=Ablation(seeds=_FIVE),
        temperature=TemperatureStudy(seeds=_FIVE),
        qk_norm=GPTSweep(arms=tuple(QK_NORM_ARMS.values()), seeds=_FIVE),
        plane=_FULL_PLANE,
        block_plane=_FULL_BLOCK,
        spreads=SpreadStudy(plane=_FULL_PLANE, spreads=(0.1, 0.3, 1.0, 3.0, 10.0),
                            w_steps=(-1, 0, 1, 2, 3)),
        budgets=BudgetStudy(plane=_FULL_PLANE, budgets=(600, 3000), d_ks=(64,)),
        learned_scale=LearnedScaleStudy(plane=_FULL_PLANE),
        head_count=HeadCountStudy(),
    ),
}


def sizes() -> Sizes:
    """The studies at the current profile's size."""
    return SIZES[profile()]
