"""1/sqrt(d_k) against a fixed temperature, across head dimensions.

Unit-variance queries and keys. One arm divides by sqrt(d_k); the other divides by a fixed
T = 8, which equals sqrt(d_k) at d_k = 64 and nowhere else. The standard deviation of the
softmax input is the derivation's measured spread (``survey.spread``) times the factor;
the mean largest weight is over the survey's rows of 64 keys (``sdpa.survey``), the rows
the derivation and failure-modes pages measure.
"""

import sdpa
from sdpa import survey

HEAD_DIMS = [4, 8, 16, 32, 64, 128, 256, 512]
FIXED_T = 8.0
N_KEYS = 64


def compare_scalings(head_dims=HEAD_DIMS):
    rows = []
    for d_k in head_dims:
        for arm, factor in (("1/sqrt(d_k)", survey.factor("1/sqrt(d_k)", d_k)),
                            (f"1/T, T = {FIXED_T:g}", 1 / FIXED_T)):
            stats = survey.rows(d_k, factor, N_KEYS)
            rows.append({"d_k": d_k, "arm": arm, "std": survey.spread(d_k) * factor,
                         "max_weight": stats.max_weight.mean().item(),
                         "entropy": stats.entropy.mean().item()})
    return rows


result = compare_scalings()
ARMS = list(dict.fromkeys(r["arm"] for r in result))

figure = sdpa.Figure(
    "temperature-fixed-vs-sqrt",
    caption=f"Rows of {N_KEYS} unit-variance keys, {survey.N_ROWS:,} queries per head dimension. "
    "Left: the "
    f"standard deviation of the softmax input. Right: the mean largest weight (a uniform row gives "
    f"1/{N_KEYS}). Dividing by √d_k gives the same softmax at every d_k; a fixed T = {FIXED_T:g} "
    f"matches it only at d_k = {int(FIXED_T ** 2)}: flatter below, sharper above.",
    alt=f"Two log-x plots against head dimension {HEAD_DIMS[0]} to {HEAD_DIMS[-1]}. The 1/sqrt(d_k) curves are "
    f"flat: standard deviation near 1 and a constant largest weight. The fixed-T curves rise: standard "
    f"deviation from {result[1]['std']:.2f} to {result[-1]['std']:.1f}, largest weight from "
    f"{result[1]['max_weight']:.2f} to {result[-1]['max_weight']:.2f}.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    for color, arm in zip(sdpa.PALETTE, ARMS):
        mine = [r for r in result if r["arm"] == arm]
        left.plot([r["d_k"] for r in mine], [r["std"] for r in mine], "o-", color=color, label=arm)
        right.plot([r["d_k"] for r in mine], [r["max_weight"] for r in mine], "o-", color=color, label=arm)
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
