"""Does training fail without the factor? What this build measured: the same reading and
starting-spread table as home prints (snippets/index/training.py, which adds the transfer
line; a test holds those two parts equal): the recall head without the factor
against the 1/sqrt(d_k) default, each rule at its own best shared rate
(``sdpa.tuning.unscaled_reading``, the lines under the tuning page's plane), and at each
starting spread the two rules from the same weights, each tuned alike (``sdpa.plane.run_spreads``,
the tuning page's starting-spread table), in the words each ratio's interval decides.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.plane import run_spreads
from sdpa.sizes import sizes
from sdpa.stats import paired
from sdpa.tuning import unscaled_reading

STUDY = sizes().spreads
out, names = run_spreads(STUDY), {x: name for name, x in STUDY.named}
tuned = "the shared rate" if STUDY.w_steps == (0,) else "the shared and the W_Q/W_K rate"
result = unscaled_reading(sizes().plane)
print("The u = 0 column keeps the unscaled start and tunes its own W_Q/W_K rate; its best point "
      "is chosen on other seeds, so on the fresh ones it can end above the column's default.\n")
print(result)
print(sdpa.markdown_table(
    ["starting spread σ_z", "the head without the factor"],
    [(f"{x:.3g}{f' ({names[x]})' if x in names else ''}",
      paired(out.confirm[(Scale.NONE, x)], out.confirm[(Scale.INV_SQRT, x)], log=True).compared())
     for x in out.spreads],
    align="ll",
    caption=f"By starting spread: one head, d_k = {STUDY.d_k}, Adam, {tuned} tuned for each rule"
    + (" (so the 1/√d_k side may leave its default W_Q/W_K rate)" if STUDY.w_steps != (0,) else "")
    + "; "
    f"this build: {len(STUDY.plane.confirm_seeds)} fresh seeds, 95% t intervals of the ratio."))
