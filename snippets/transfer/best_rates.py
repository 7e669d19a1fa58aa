"""How each rule's best learning rate moves with d_k, against two predictions.

The best shared rate of every rule's default at every (optimiser, d_k) of the plane
(``sdpa.plane.run_plane``: each default is a point of the plane, swept over the shared
rates), taken between grid rates: the vertex of a parabola through the mean log loss at
the best rate and its two neighbours. Relative to the 1/sqrt(d_k) rule's best rate, it
should move as d_k^e, with e given by what the best rate keeps the same from one rule to
the next (``sdpa.transfer.predicted_lr_exponent``): W_Q and W_K's relative speed
("weights"), or the logits' speed ("logits"). Under SGD the step of W_Q and W_K depends on
their gradient, so the prediction also comes from the gradient ratio measured at
initialisation (``sdpa.transfer.gradient_ratios``).
"""


import numpy as np

import sdpa
from sdpa.attention import Scale
from sdpa.plots import SCALE_COLORS
from sdpa.plane import rule_step, run_plane
from sdpa.sizes import sizes
from sdpa.training import OPTIMIZER_LABELS
from sdpa.transfer import INVARIANTS, gradient_ratios, predicted_lr_exponent

PLANE = sizes().plane
RULES = tuple(Scale)


def slope(d_ks, values):
    """The least-squares slope of log(value) against log(d_k)."""
    return round(float(np.polyfit(np.log(d_ks), np.log(values), 1)[0]), 6)


def transfer(plane):
    """Per optimiser and rule: the best rate at each d_k, its slopes and the predictions."""
    planes = run_plane(plane)
    gradients = gradient_ratios(plane)  # SGD's step ratio g at initialisation, per rule and d_k
    rows = []
    for optimizer in plane.optimizers:
        best = {rule: [planes[(optimizer, d)].vertex_lr(rule_step(rule, optimizer))
                       for d in plane.d_ks] for rule in RULES}
        for rule in RULES:
            ratio = [b / s for b, s in zip(best[rule], best[Scale.INV_SQRT])]
            rows.append({
                "optimizer": optimizer, "rule": rule, "best": best[rule], "ratio": ratio,
                "slope": slope(plane.d_ks, best[rule]),
                "relative_slope": slope(plane.d_ks, ratio),
                "predicted": {i: predicted_lr_exponent(optimizer, rule, i) for i in INVARIANTS},
                "gradient_slope": slope(plane.d_ks, [gradients[rule][d] for d in plane.d_ks]),
            })
            rows[-1]["measured_g"] = {i: predicted_lr_exponent(
                optimizer, rule, i, gradient_slope=rows[-1]["gradient_slope"]) for i in INVARIANTS}
    return rows


if len(PLANE.d_ks) < 3:  # the quick build measures one head size: no slope to fit
    result = []
    print('!!! note "Quick build: one head size"\n    This build measured the plane at '
          f"d_k = {PLANE.d_ks[0]} alone; the slopes need three head sizes, which the full "
          "build measures.\n")
else:
    result = transfer(PLANE)
    d_ks = list(PLANE.d_ks)
    at = {(r["optimizer"], r["rule"]): r for r in result}
    LABELS = {"weights": "W_Q, W_K speed", "logits": "logit speed"}
    STYLES = {"weights": "--", "logits": ":"}

    def predicted(r, invariant):
        if r["rule"] is Scale.INV_SQRT:
            return "—"
        text = f"{r['predicted'][invariant]:+g}"
        if r["optimizer"] == "sgd":  # with the gradient ratio measured at initialisation
            text += f" ({r['measured_g'][invariant]:+.2f})"
        return text

    print(
        sdpa.markdown_table(
            ["optimiser", "scaling", *[f"best rate, d_k = {d}" for d in d_ks],
             "slope of the best rate", "slope relative to 1/√d_k",
             *[f"predicted: same {LABELS[i]}" for i in INVARIANTS]],
            [(OPTIMIZER_LABELS[r["optimizer"]], r["rule"].label, *r["best"], r["slope"],
              "—" if r["rule"] is Scale.INV_SQRT else r["relative_slope"],
              *[predicted(r, i) for i in INVARIANTS])
             for r in result],
            caption="Best rates between grid points (vertex of a parabola in log rate through "
            "the best grid point and its neighbours; the grid point itself when a neighbour "
            f"diverged). Slopes: least-squares fits of log rate against log d_k over d_k = "
            f"{', '.join(map(str, d_ks))}; 'relative' divides by the 1/√d_k rule's best rate "
            "first. Predicted: the relative slope if the best rate keeps W_Q and W_K's "
            "relative speed the same, or the logits' speed; under SGD, in brackets, the same "
            "prediction from the gradient ratio g measured at initialisation instead of the "
            "factor's ratio (see the text).",
        )
    )

    figure = sdpa.Figure(
        "lr-transfer",
        caption="Each rule's best learning rate divided by the 1/√d_k rule's, against d_k. "
        "Markers: measured (vertex estimates). Lines: the predicted slopes, drawn through the "
        "measured ratio at d_k = 16 (no invariant fixes the constant). Dashed: if the best rate "
        "keeps W_Q and W_K's relative speed (d_k^0 for both rules under Adam; d_k^−1/2 for none "
        "and d_k^+1/2 for 1/d_k under SGD); dotted: if it keeps the logits' speed (d_k^−1/2 and "
        "d_k^+1/2 under Adam, d_k^−1 and d_k^+1 under SGD).",
        alt="Two log-log panels. The unscaled rule's relative best rate stays roughly flat under "
        "Adam and falls with d_k under SGD, near the dashed lines of the first prediction.",
        ncols=2,
        size=(7.8, 4.0),
        sharey=True,
    )
    with figure as panels:
        for ax, optimizer in zip(panels, PLANE.optimizers):
            for rule in RULES:
                r, color = at[(optimizer, rule)], sdpa.PALETTE[SCALE_COLORS[rule]]
                ax.plot(d_ks, r["ratio"], "o-", color=color, label=f"{rule.label}: measured")
                if rule is Scale.INV_SQRT:
                    continue
                for invariant in INVARIANTS:  # a slope, drawn through the measured ratio at 16
                    e = r["predicted"][invariant]
                    start = r["ratio"][0] / d_ks[0] ** e
                    ax.plot(d_ks, [start * d ** e for d in d_ks], STYLES[invariant], color=color,
                            lw=1, label=f"{rule.label}: predicted, same {LABELS[invariant]}")
            ax.set(xscale="log", yscale="log", xlabel="d_k", title=OPTIMIZER_LABELS[optimizer])
            ax.set_xticks(d_ks, [str(d) for d in d_ks], minor=False)
            ax.minorticks_off()
        panels[0].set_ylabel("best rate / best rate of 1/√d_k")
        handles, labels = panels[0].get_legend_handles_labels()
        panels[0].figure.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=7)
    print(figure.html)

    def nearest(slope, predictions):
        """The invariant whose predicted slope lies closest to ``slope``."""
        return min(predictions, key=lambda i: abs(slope - predictions[i]))

    lines = []
    for r in result:
        if r["rule"] is Scale.INV_SQRT:
            continue
        line = (f"{OPTIMIZER_LABELS[r['optimizer']]}, {r['rule'].label}: relative slope "
                f"{r['relative_slope']:+.2f}, closest to the same "
                f"{LABELS[nearest(r['relative_slope'], r['predicted'])]}")
        if r["optimizer"] == "sgd":
            line += (f"; from the measured gradient ratio (slope {r['gradient_slope']:+.2f}), "
                     f"to the same {LABELS[nearest(r['relative_slope'], r['measured_g'])]}")
        lines.append(line)
    print("Which prediction each measured slope lies closest to:\n\n"
          + "\n".join(f"- {line}" for line in lines) + "\n")

    sgd, adam = at[("sgd", Scale.INV_SQRT)]["best"], at[("adam", Scale.INV_SQRT)]["best"]
    spread, fall = max(sgd) / min(sgd), adam[0] / adam[-1]
    print(f"Does one rate serve every head size? With 1/√d_k, SGD's best rate spans a factor "
          f"of {spread:.2f} across d_k = {', '.join(map(str, d_ks))}"
          + (" (within a factor of two: one rate serves them all)" if spread < 2 else "")
          + f"; Adam's falls by a factor of {fall:.2f} from d_k = {d_ks[0]} to {d_ks[-1]}"
          + (" (more than half)" if fall > 2 else "") + ".\n")
    if fall > 2:
        print('!!! correction "Correction: one set of hyperparameters does not serve every head '
              'size here"\n    A common argument for the factor is that, by keeping the logits\' '
              "spread the same at every width, it lets one set of hyperparameters work across "
              "model sizes. In these runs the 1/√d_k head's best Adam rate falls by more than "
              f"half from d_k = {d_ks[0]} to {d_ks[-1]}. The factor fixes the logits' spread "
              "at the start; it does not fix how fast the other weights should learn.\n")
