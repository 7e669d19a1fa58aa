"""SGD's step, with the gradient W_Q really gets: each rule's |grad W_Q| over the 1/sqrt(d_k)
head's at initialisation, against d_k.

From the same weights and batches, on every seed of the plane (choice and fresh), the ratio
G of the mean gradient norms over eight batches (``sdpa.transfer.gradient_ratios``). Its
slope against d_k (log-log) is what the SGD prediction needs: the factor's own ratio would
give +1/2 for no factor and -1/2 for 1/d_k. Per rule: G at each d_k (geometric mean over
the seeds, with its range) and the slope, with a 95% t interval over the seeds' own slopes.
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.sizes import sizes
from sdpa.transfer import GRADIENT_D_KS, gradient_ratios, gradient_slope

PLANE = sizes().plane


def gradients(plane):
    ratios = gradient_ratios(plane)
    rows = []
    for rule in (Scale.NONE, Scale.INV):
        mean, interval = gradient_slope(ratios[rule])
        rows.append({"rule": rule, "G": ratios[rule], "slope": mean, "interval": interval,
                     "factor_slope": {Scale.NONE: 0.5, Scale.INV: -0.5}[rule]})
    return rows


result = gradients(PLANE)

print(sdpa.markdown_table(
    ["scaling", *[f"G at d_k = {d}" for d in GRADIENT_D_KS], "slope of G (95% t interval)",
     "the factor's slope"],
    [(r["rule"].label,
      *[f"{math.exp(r['G'][d].log().mean().item()):.3g} "
        f"({r['G'][d].min().item():.2g}–{r['G'][d].max().item():.2g})" for d in GRADIENT_D_KS],
      f"{r['slope']:+.3f} {str(r['interval']).split(' ', 1)[1]}", f"{r['factor_slope']:+g}")
     for r in result],
    align="l" + "r" * (len(GRADIENT_D_KS) + 2),
    caption=f"G: |grad W_Q| of the rule over the 1/√d_k head's at initialisation, same "
    f"weights and batches, geometric mean (min–max) over {len(result[0]['G'][16])} seeds. "
    "Slope: least-squares slope of log G against log d_k, from the geometric means, "
    "with the 95% t interval of the seeds' own slopes.",
))

for r in result:
    inside = r["interval"].low < r["factor_slope"] < r["interval"].high
    print(f"- {r['rule'].label}: the slope of G is {r['slope']:+.2f} "
          f"[{r['interval'].low:+.2f}, {r['interval'].high:+.2f}]; the factor's own "
          f"{r['factor_slope']:+g} lies {'inside' if inside else 'outside'} the interval.")
print()
