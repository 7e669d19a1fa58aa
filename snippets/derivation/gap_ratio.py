"""From spread to winner-takes-all: the best-minus-worst gap in a row, and e^gap.

For a query and a row of n keys, softmax weighs the best key e^gap times more than the
worst. We take the median gap over the survey's 4,096 queries (fresh keys every 32) for
three row lengths, unscaled and scaled, and the weight ratio it implies. PyTorch's default
``nn.Linear`` initialisation gives q and k components of variance 1/3, so its unscaled
logits are the unit-variance ones divided by 3: the table shows both.
"""

import math

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
ROW_LENGTHS = [8, 64, 512]
TABLE_N = 64


def median_gap(d_k, rule, init="unit", n=TABLE_N):
    return survey.rows(d_k, survey.factor(rule, d_k, init), n).gap.median().item()


result = [
    {"n": n, "d_k": d_k, "gap_unscaled": median_gap(d_k, Scale.NONE, n=n),
     "gap_default_init": median_gap(d_k, Scale.NONE, "default", n=n),
     "gap_scaled": median_gap(d_k, Scale.INV_SQRT, n=n)}
    for n in ROW_LENGTHS for d_k in HEAD_DIMS
]

print(
    sdpa.markdown_table(
        ["d_k", "median gap, q·k", "e^gap", "median gap, q·k, default init", "e^gap",
         "median gap, q·k/√d_k", "e^gap"],
        [(r["d_k"], r["gap_unscaled"], math.exp(r["gap_unscaled"]), r["gap_default_init"],
          math.exp(r["gap_default_init"]), r["gap_scaled"], math.exp(r["gap_scaled"]))
         for r in result if r["n"] == TABLE_N],
        caption=f"Rows of {TABLE_N} keys, {survey.N_ROWS:,} queries per head dimension. The gap "
        "is the largest minus the smallest logit of a row; e^gap is how many times more weight "
        "softmax gives the best key than the worst. Unit-variance q and k, except the default-init "
        "columns (components of variance 1/3, as PyTorch's nn.Linear gives).",
    )
)

figure = sdpa.Figure(
    "gap-growth",
    caption="The median best-minus-worst logit gap per row, against d_k, for rows of 8, 64 "
    "and 512 keys: unscaled (solid) it grows like √d_k; scaled (dashed) it stays flat.",
    alt="Log-log plot of the median logit gap against head dimension: three solid lines "
    "rising with slope one half, three dashed lines flat.",
    size=(5.2, 3.4),
)
with figure as ax:
    for color, n in zip(sdpa.PALETTE, ROW_LENGTHS):
        mine = [r for r in result if r["n"] == n]
        dims = [r["d_k"] for r in mine]
        ax.plot(dims, [r["gap_unscaled"] for r in mine], "o-", color=color, label=f"n = {n}, q·k")
        ax.plot(dims, [r["gap_scaled"] for r in mine], "s--", color=color,
                label=f"n = {n}, scaled")
    ax.set(xscale="log", yscale="log", xlabel="head dimension d_k",
           ylabel="median gap (max − min logit)")
    ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
    ax.set_ylim(top=ax.get_ylim()[1] * 6)  # head-room for the legend above the lines
    ax.legend(ncols=2, fontsize=7.5, loc="upper left")
print(figure.html)
