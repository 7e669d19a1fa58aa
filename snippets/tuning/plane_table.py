"""What the factor buys, read off the plane: each rule's default and the u = 0 column's best
against the plane's best point on fresh seeds, how wide the good region is, and the unscaled
start against the 1/sqrt(d_k) default (``sdpa.tuning.unscaled_reading``).

The same runs as the plane figure (``sdpa.plane.run_plane``, memoised). Each setting
(a rule's default, or the best point of the choice seeds) was rerun at its chosen shared
rate on the fresh seeds; the ratio to the best point is paired seed by seed (a t interval
on the difference of log losses). Sensitivity, as Wortsman et al. define it for learning
rates: the mean over a line of the plane of min(L, L0) - L*, in nats, where L* is the
line's best and L0 the chance loss (about where every run starts), along w (the W_Q/W_K
rate) at the best point's u and along u (their starting scale) at its w.
"""

import math

import torch

import sdpa
from sdpa.gpt import lr_sensitivity
from sdpa.plane import SETTING_LABELS, run_plane, settings_table
from sdpa.sizes import sizes
from sdpa.training import OPTIMIZER_LABELS
from sdpa.tuning import unscaled_reading

PLANE = sizes().plane


def good_region(plane):
    rows = []
    for (optimizer, d_k), r in run_plane(plane).items():
        if d_k not in plane.grid_d_ks:
            continue
        (bu, bw), _ = r.settings["best"]
        surface = dict(zip(r.points, r.surface.exp().tolist()))
        along_w = torch.tensor([surface[p] for p in r.points if p[0] == bu])
        along_u = torch.tensor([surface[p] for p in r.points if p[1] == bw])
        rows.append({"optimizer": optimizer, "d_k": d_k, "best": (bu, bw),
                     "sensitivity_w": lr_sensitivity(along_w, r.chance),
                     "sensitivity_u": lr_sensitivity(along_u, r.chance)})
    return rows


result = {"planes": run_plane(PLANE), "region": good_region(PLANE)}

print(settings_table(PLANE, result["planes"]))
if result["region"]:
    print(sdpa.markdown_table(
        ["optimiser", "d_k", "best point (u, w)", "sensitivity along w (nats)",
         "sensitivity along u (nats)"],
        [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], f"({r['best'][0]}, {r['best'][1]})",
          r["sensitivity_w"], r["sensitivity_u"]) for r in result["region"]],
        align="lrrrr",
        caption="How much the loss rises away from the best point along each axis (Wortsman et "
        "al.'s learning-rate sensitivity, on the choice seeds; 0: the line is flat).",
    ))


def reading(planes):
    """Per (optimiser, d_k): which defaults (and, where the grid was measured, the u = 0
    column's best) the fresh seeds cannot tell from the best point, and how far above it
    the others end (their t intervals): a row of the table under the settings."""
    rows = []
    for (optimizer, d_k), r in planes.items():
        near, above, below = [], [], []
        column = ("column",) if len(r.points) > 3 else ()  # where the whole grid was measured
        for name in ("none", "inv_sqrt", "inv", *column):
            v = r.versus_best(name)
            label = SETTING_LABELS[name]
            if v is None:
                above.append(f"{label} (some runs diverged)")
            elif v.excludes_zero:
                (above if v.low > 0 else below).append(
                    f"{label} ×{math.exp(v.low):.2g}–{math.exp(v.high):.2g}")
            else:
                near.append(label)
        rows.append((OPTIMIZER_LABELS[optimizer], d_k, ", ".join(near) or "none",
                     ", ".join(above) or "none", ", ".join(below) or "none"))
    return rows


print(sdpa.markdown_table(
    ["optimiser", "d_k", "not told apart from the best point", "above it (interval of the ratio)",
     "below it (interval of the ratio)"],
    reading(result["planes"]), align="lrlll",
    caption="Read off the settings table: fresh seeds, 95% t intervals of the ratio to the "
    "best point. Below it: the choice seeds' best point was partly luck."))
print(unscaled_reading(PLANE))
