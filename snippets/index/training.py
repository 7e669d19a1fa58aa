"""Does training fail without the factor? What this build measured, printed by the tuning
page's own functions from the same runs: the recall head without the factor against the
1/sqrt(d_k) default, each rule at its own best shared rate (``sdpa.tuning.unscaled_reading``,
the lines under the plane's table); then, at each starting spread, the two rules from the
same weights, each tuned alike (``sdpa.plane.run_spreads``, the tuning page's starting-spread
table), in the words each ratio's interval decides (``Interval.compared``); and whether one
learning rate serves every head size under 1/sqrt(d_k), the transfer page's answer
(``sdpa.transfer.rate_change``: its best rate at the largest d_k over at the smallest).
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.plane import run_spreads
from sdpa.sizes import sizes
from sdpa.stats import paired
from sdpa.training import OPTIMIZER_LABELS
from sdpa.transfer import rate_change
from sdpa.tuning import unscaled_reading

STUDY = sizes().spreads


def by_spread(study):
    """Per starting spread: its name, if it has one, and the ratio of the unscaled head's final
    loss to the 1/sqrt(d_k) head's, paired by seed, with its 95% t interval."""
    out, names = run_spreads(study), {x: name for name, x in study.named}
    return [(x, names.get(x), paired(out.confirm[(Scale.NONE, x)],
                                      out.confirm[(Scale.INV_SQRT, x)], log=True))
            for x in out.spreads]


result = unscaled_reading(sizes().plane)
spreads = by_spread(STUDY)
tuned = "the shared rate" if STUDY.w_steps == (0,) else "the shared and the W_Q/W_K rate"
print(result)
print(sdpa.markdown_table(
    ["starting spread σ_z", "the head without the factor"],
    [(f"{x:.3g}{f' ({name})' if name else ''}", interval.compared())
     for x, name, interval in spreads],
    align="ll",
    caption=f"By starting spread: one head, d_k = {STUDY.d_k}, Adam, {tuned} tuned for each rule; "
    f"this build: {len(STUDY.plane.confirm_seeds)} fresh seeds, 95% t intervals of the ratio."))


def one_rate(plane):
    """Per optimiser: 1/sqrt(d_k)'s best rate at the largest d_k over at the smallest, and
    whether its interval tells it from one rate (None where the build has one head size)."""
    return {optimizer: rate_change(plane, optimizer) for optimizer in plane.optimizers}


PLANE = sizes().plane
transfer = one_rate(PLANE)
if None in transfer.values():
    print(f"Does one learning rate serve every head size under 1/√d_k? This build measured "
          f"d_k = {PLANE.d_ks[0]} alone; the full build answers it on "
          "[the transfer page](transfer.md#does-one-rate-serve-every-head-size).\n")
else:
    print(f"Does one learning rate serve every head size under 1/√d_k? Its best rate at d_k = "
          f"{PLANE.d_ks[-1]} over its best at {PLANE.d_ks[0]} ({len(PLANE.choose_seeds)} choice "
          "seeds, 95% t intervals): " + "; ".join(
              f"{OPTIMIZER_LABELS[o]} ×{math.exp(i.mean):.2f} [{math.exp(i.low):.2f}, "
              f"{math.exp(i.high):.2f}], " + ("it moves" if i.excludes_zero else "not told apart "
                                              "from one rate") for o, i in transfer.items())
          + " ([transfer](transfer.md#does-one-rate-serve-every-head-size)).\n")
