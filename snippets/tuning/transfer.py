"""How each rule's best learning rate moves with d_k, against the equivalence's prediction.

The best rate of every (optimiser, d_k, rule) of the tuned sweeps (``run_tuning``), taken
between grid points: the vertex of a parabola through the log loss at the best rate and
its two neighbours. The prediction: a rule whose factor is d_k^a times 1/sqrt(d_k) should
have a best rate d_k^(-a/2) (Adam) or d_k^(-a) (SGD) times 1/sqrt(d_k)'s, if only W_Q and
W_K's rate mattered and the different initialisation did not
(``sdpa.studies.predicted_lr_exponent``).
"""


import numpy as np

import sdpa
from sdpa.attention import Scale
from sdpa.plots import SCALE_COLORS
from sdpa.studies import Tuning, predicted_lr_exponent, run_tuning
from sdpa.training import OPTIMIZER_LABELS

TUNING = Tuning()


def slope(d_ks, values):
    """The least-squares slope of log(value) against log(d_k)."""
    return float(np.polyfit(np.log(d_ks), np.log(values), 1)[0])


def transfer(tuning):
    """Per optimiser and rule: the best rate at each d_k, its slopes and the prediction."""
    tuned = run_tuning(tuning)
    rows = []
    for optimizer in tuning.optimizers:
        best = {rule: [tuned[(optimizer, d, rule)].vertex_lr for d in tuning.d_ks]
                for rule in tuning.rules}
        for rule in tuning.rules:
            ratio = [b / s for b, s in zip(best[rule], best[Scale.INV_SQRT])]
            rows.append({
                "optimizer": optimizer, "rule": rule, "best": best[rule], "ratio": ratio,
                "slope": slope(tuning.d_ks, best[rule]),
                "relative_slope": slope(tuning.d_ks, ratio),
                "predicted": predicted_lr_exponent(optimizer, rule),
            })
    return rows


result = transfer(TUNING)
d_ks = list(TUNING.d_ks)
at = {(r["optimizer"], r["rule"]): r for r in result}


print(
    sdpa.markdown_table(
        ["optimiser", "scaling", *[f"best rate, d_k = {d}" for d in d_ks],
         "slope of the best rate", "slope relative to 1/√d_k", "predicted"],
        [(OPTIMIZER_LABELS[r["optimizer"]], r["rule"].label, *r["best"], r["slope"],
          "—" if r["rule"] is Scale.INV_SQRT else r["relative_slope"],
          "—" if r["rule"] is Scale.INV_SQRT else f"{r['predicted']:+g}")
         for r in result],
        caption="Best rates between grid points (vertex of a parabola in log rate through "
        "the best grid point and its neighbours; the grid point itself when a neighbour "
        f"diverged). Slopes: least-squares fits of log rate against log d_k over d_k = "
        f"{', '.join(map(str, d_ks))}; 'relative' divides by the 1/√d_k rule's best rate "
        "first. Predicted: the relative slope if only W_Q and W_K's rate mattered.",
    )
)

figure = sdpa.Figure(
    "tuning-transfer",
    caption="Each rule's best learning rate divided by the 1/√d_k rule's, against d_k. "
    "Markers: measured (vertex estimates). Dashed: the prediction d_k^e from the "
    "equivalence (e = −1/4 and +1/4 under Adam, −1/2 and +1/2 under SGD), which assumes "
    "that only W_Q and W_K's learning rate matters and ignores the different "
    "initialisation.",
    alt="Two log-log panels. Under SGD the unscaled rule's relative best rate falls with d_k "
    "roughly along its predicted line; under Adam it stays roughly flat instead of falling.",
    ncols=2,
    size=(7.8, 3.3),
    sharey=True,
)
with figure as panels:
    for ax, optimizer in zip(panels, TUNING.optimizers):
        for rule in TUNING.rules:
            r, color = at[(optimizer, rule)], sdpa.PALETTE[SCALE_COLORS[rule]]
            ax.plot(d_ks, r["ratio"], "o-", color=color, label=f"{rule.label}: measured")
            if rule is not Scale.INV_SQRT:
                ax.plot(d_ks, [d ** r["predicted"] for d in d_ks], "--", color=color,
                        label=f"{rule.label}: predicted, d_k^{r['predicted']:+g}")
        ax.set(xscale="log", yscale="log", xlabel="d_k", title=OPTIMIZER_LABELS[optimizer])
        ax.set_xticks(d_ks, [str(d) for d in d_ks], minor=False)
        ax.minorticks_off()
        ax.legend(fontsize=7)
    panels[0].set_ylabel("best rate / best rate of 1/√d_k")
print(figure.html)
