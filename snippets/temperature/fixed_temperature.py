"""1/sqrt(d_k) against a fixed temperature, across head dimensions.

Unit-variance queries and keys. One arm divides by sqrt(d_k); the other divides by a fixed
T = 8, which equals sqrt(d_k) at d_k = 64 and nowhere else. The standard deviation of the
softmax input is the derivation's measured spread (``survey.spread``) times the factor;
the mean largest weight is over the survey's rows of 64 keys (``sdpa.survey``), the rows
the derivation and failure-modes pages measure.
"""

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [4, 8, 16, 32, 64, 128, 256, 512]
FIXED_T = 8.0
N_KEYS = 64


def compare_scalings(head_dims=HEAD_DIMS):
    """Per d_k, one row for 1/sqrt(d_k) (``fixed=False``) and one for 1/T (``fixed=True``)."""
    rows = []
    for d_k in head_dims:
        for fixed, factor in ((False, survey.factor(Scale.INV_SQRT, d_k)), (True, 1 / FIXED_T)):
            stats = survey.rows(d_k, factor, N_KEYS)
            rows.append({"d_k": d_k, "fixed": fixed, "std": survey.spread(d_k) * factor,
                         "max_weight": stats.max_weight.mean().item(),
                         "entropy": stats.entropy.mean().item()})
    return rows


result = compare_scalings()
LABELS = {False: "1/√d_k", True: f"1/T, T = {FIXED_T:g}"}
fixed = {r["d_k"]: r for r in result if r["fixed"]}
low, high = fixed[HEAD_DIMS[0]], fixed[HEAD_DIMS[-1]]

figure = sdpa.Figure(
    "temperature-fixed-vs-sqrt",
    caption=f"Rows of {N_KEYS} unit-variance keys, {survey.N_ROWS:,} queries per head dimension. "
    "Left: the softmax input's standard deviation. Right: the mean largest weight. A fixed "
    f"T = {FIXED_T:g} matches √d_k only at d_k = {int(FIXED_T ** 2)}: flatter below, sharper "
    "above.",
    alt=f"Two log-x plots against head dimension {HEAD_DIMS[0]} to {HEAD_DIMS[-1]}. The "
    "1/sqrt(d_k) curves are flat: standard deviation near 1 and a constant largest weight. The "
    f"fixed-T curves rise: standard deviation from {low['std']:.2f} to {high['std']:.1f}, "
    f"largest weight from {low['max_weight']:.2f} to {high['max_weight']:.2f}.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    for color, (is_fixed, label) in zip(sdpa.PALETTE, LABELS.items()):
        mine = [r for r in result if r["fixed"] is is_fixed]
        dims = [r["d_k"] for r in mine]
        left.plot(dims, [r["std"] for r in mine], "o-", color=color, label=label)
        right.plot(dims, [r["max_weight"] for r in mine], "o-", color=color, label=label)
    right.axhline(1 / N_KEYS, color=sdpa.INK, lw=0.8, ls=":", label=f"uniform, 1/{N_KEYS}")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
        ax.set_xlabel("head dimension d_k")
    left.set(yscale="log", ylabel="std of softmax input")
    left.minorticks_off()
    left.set_yticks([0.25, 0.5, 1, 2], ["0.25", "0.5", "1", "2"])
    right.set(ylabel="mean largest weight", ylim=(0, 1))
    left.legend()
    right.legend()
print(figure.html)
