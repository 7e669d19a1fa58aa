"""How each rule's best learning rate moves with d_k, against two predictions.

The best shared rate of every rule's default at every (optimiser, d_k) of the plane
(``sdpa.plane.run_plane``: each default is a point of the plane, swept over the shared
rates), taken between grid rates: the vertex of a parabola through the log loss at the
best rate and its two neighbours (``sdpa.transfer.best_rates``), from the choice seeds'
mean and from each choice seed alone. Relative to the 1/sqrt(d_k) rule's best rate, it
should move as a power of d_k, its exponent given by what the best rate keeps the same from
one rule to the next (``sdpa.transfer.predicted_lr_exponent``): W_Q and W_K's relative speed
("weights"), or the logits' speed ("logits"). Under SGD the prediction also comes from the
gradient ratio measured at initialisation (``sdpa.transfer.gradient_ratios``). Every slope
carries a 95% t interval over the choice seeds' own slopes.
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.plane import rule_step, run_plane
from sdpa.plots import SCALE_COLORS
from sdpa.sizes import sizes
from sdpa.training import OPTIMIZER_LABELS
from sdpa.transfer import (INVARIANTS, best_limit, best_rates, gradient_ratios, gradient_slope,
                           predicted_lr_exponent, rate_change, slope, slope_interval)

PLANE = sizes().plane
RULES = tuple(Scale)


def transfer(plane):
    """Per optimiser and rule: the best rate at each d_k, its slopes and the predictions."""
    planes = run_plane(plane)
    gradients = gradient_ratios(plane)  # SGD's step ratio G at initialisation, per rule and d_k
    rows = []
    for optimizer in plane.optimizers:
        rates = {rule: [best_rates(planes[(optimizer, d)], rule_step(rule, optimizer))
                        for d in plane.d_ks] for rule in RULES}
        best = {rule: [mean for mean, _ in rates[rule]] for rule in RULES}
        seeds = {rule: [each for _, each in rates[rule]] for rule in RULES}
        for rule in RULES:
            relative = [[b / s for b, s in zip(a, c)]
                        for a, c in zip(seeds[rule], seeds[Scale.INV_SQRT])]
            ratio = [b / s for b, s in zip(best[rule], best[Scale.INV_SQRT])]
            rows.append({
                "optimizer": optimizer, "rule": rule, "best": best[rule], "seeds": seeds[rule],
                "limits": [best_limit(planes[(optimizer, d)], rule_step(rule, optimizer))
                           for d in plane.d_ks],
                "ratio": ratio,
                "slope": slope(plane.d_ks, best[rule]),
                "slope_interval": slope_interval(plane.d_ks, seeds[rule]),
                "relative_slope": slope(plane.d_ks, ratio),
                "relative_interval": (None if rule is Scale.INV_SQRT
                                      else slope_interval(plane.d_ks, relative)),
                "predicted": {i: predicted_lr_exponent(optimizer, rule, i) for i in INVARIANTS},
                "gradient_slope": gradient_slope({d: gradients[rule][d] for d in plane.d_ks})[0],
            })
            rows[-1]["measured_g"] = {i: predicted_lr_exponent(
                optimizer, rule, i, gradient_slope=rows[-1]["gradient_slope"]) for i in INVARIANTS}
    return rows


if len(PLANE.d_ks) < 3:  # the quick build measures one head size: no slope to fit
    result = []
    print('!!! note "Quick build: one head size"\n    This build measured the plane at '
          f"d_k = {PLANE.d_ks[0]} alone. The slopes need three head sizes, which the full "
          "build measures. So only the full build prints the table of best rates, the list "
          "of the predictions each slope's interval holds, and the line on whether one rate "
          "serves every head size.\n")
else:
    result = transfer(PLANE)
    d_ks = list(PLANE.d_ks)
    at = {(r["optimizer"], r["rule"]): r for r in result}
    LABELS = {"weights": "W_Q, W_K speed", "logits": "logit speed"}
    STYLES = {"weights": "--", "logits": ":"}

    def bracket(interval):
        return f"[{interval.low:+.2f}, {interval.high:+.2f}]"

    MARKS = {"edge": " (edge)", "stability": " (stability)", "": ""}

    def rate(value, limit):
        return f"{value:.3g}{MARKS[limit]}"

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
            [(OPTIMIZER_LABELS[r["optimizer"]], r["rule"].label,
              *(rate(b, limit) for b, limit in zip(r["best"], r["limits"])),
              f"{r['slope']:+.2f} {bracket(r['slope_interval'])}",
              "—" if r["rule"] is Scale.INV_SQRT else
              f"{r['relative_slope']:+.2f} {bracket(r['relative_interval'])}",
              *[predicted(r, i) for i in INVARIANTS])
             for r in result],
            caption="Best rates between grid points (vertex of a parabola in log rate through "
            "the best grid point and its neighbours; the grid point itself when a neighbour "
            f"diverged), from the mean over {len(PLANE.choose_seeds)} choice seeds. Slopes: "
            "least-squares fits of log rate against log d_k over d_k = "
            f"{', '.join(map(str, d_ks))}, "
            "with the 95% t interval of the choice seeds' own slopes; 'relative' divides by the "
            "1/√d_k rule's best rate first. Predicted: the relative slope if the best rate keeps "
            "W_Q and W_K's relative speed the same, or the logits' speed; under SGD, in brackets, "
            "the same prediction from the gradient ratio G measured at initialisation instead "
            "of the factor's ratio (see the text). (edge): the best grid rate is an end of the "
            "window, so the best may lie beyond it; (stability): the next rate up diverged on a "
            "choice seed, so the best rate is the fastest that trains, a stability limit rather "
            "than an optimum.",
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
        alt="Two log-log panels, Adam and SGD: each rule's best learning rate over the 1/√d_k "
        "rule's against d_k, measured, with the two predicted slopes as dashed and dotted lines.",
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

    def inside(interval, predictions):
        """The invariants whose predicted slope the interval holds, and those it excludes."""
        held = [i for i in INVARIANTS if interval.low < predictions[i] < interval.high]
        return held, [i for i in INVARIANTS if i not in held]

    def words(held, excluded, predictions):
        def named(group):
            return " and ".join(f"the same {LABELS[i]} ({predictions[i]:+.2f})" for i in group)

        return ((f"holds {named(held)}" if held else "holds neither prediction")
                + (f"; excludes {named(excluded)}" if excluded else ""))

    lines = []
    for r in result:
        if r["rule"] is Scale.INV_SQRT:
            continue
        interval = r["relative_interval"]
        line = (f"{OPTIMIZER_LABELS[r['optimizer']]}, {r['rule'].label}: relative slope "
                f"{r['relative_slope']:+.2f} {bracket(interval)}; the interval "
                f"{words(*inside(interval, r['predicted']), r['predicted'])}")
        bounded = [f"{d} ({limit})" for d, limit in zip(d_ks, r["limits"]) if limit]
        if bounded:
            line += (f"; its best rate at d_k = {', '.join(bounded)} is bounded by the grid or by "
                     "divergence, so this slope is not one of optima alone")
        if r["optimizer"] == "sgd":
            line += (f"; with the measured gradient ratio (slope {r['gradient_slope']:+.2f}) it "
                     f"{words(*inside(interval, r['measured_g']), r['measured_g'])}")
        lines.append(line)
    print(f"Which predictions each measured slope's interval holds ({len(PLANE.choose_seeds)} "
          "choice seeds, 95% t intervals):\n\n" + "\n".join(f"- {line}" for line in lines) + "\n")
    readings = sum(len(INVARIANTS) * (1 + (r["optimizer"] == "sgd"))
                   for r in result if r["rule"] is not Scale.INV_SQRT)
    print(f"The list reads {readings} predictions against {len(lines)} intervals, each on "
          f"{len(PLANE.choose_seeds) - 1} degrees of freedom and uncorrected for their number: "
          "were every prediction right, about one reading in twenty would still say \"excludes\" "
          "by chance.\n")

    def change(optimizer):
        """1/sqrt(d_k)'s best rate at the largest d_k over at the smallest, seed by seed: its
        geometric mean and 95% t interval (``sdpa.transfer.rate_change``)."""
        interval = rate_change(PLANE, optimizer)
        return [math.exp(x) for x in (interval.mean, interval.low, interval.high)]

    def bound(optimizer):
        """Where 1/sqrt(d_k)'s best rate at an end of the head sizes is not an optimum."""
        ends = zip(d_ks, at[(optimizer, Scale.INV_SQRT)]["limits"])
        return "".join(f" (its best rate at d_k = {d}: {limit})" for d, limit in ends
                       if limit and d in (d_ks[0], d_ks[-1]))

    serve = {optimizer: change(optimizer) for optimizer in PLANE.optimizers}
    print("Does one rate serve every head size? With 1/√d_k, the best rate at d_k = "
          f"{d_ks[-1]} over the best rate at d_k = {d_ks[0]} (geometric mean over the choice "
          "seeds, 95% t interval): "
          + "; ".join(f"{OPTIMIZER_LABELS[o]} ×{m:.2f} [{lo:.2f}, {hi:.2f}]"
                      + (" (the interval holds 1)" if lo < 1 < hi else "") + bound(o)
                      for o, (m, lo, hi) in serve.items()) + ".\n")
    moved = [OPTIMIZER_LABELS[o] for o, (_, lo, hi) in serve.items() if hi < 1 or lo > 1]
    if moved:
        print(f'!!! correction "Correction: under {" and ".join(moved)}, one learning rate '
              'does not serve every head size here"'
              "\n    A common argument for the factor is that, by keeping the logits' spread the "
              "same at every width, it lets one set of hyperparameters work across model "
              f"sizes. In these runs the 1/√d_k head's best {' and '.join(moved)} rate moves "
              f"between d_k = {d_ks[0]} and {d_ks[-1]}: the interval above excludes 1. The "
              "factor fixes the logits' spread at the start; it does not fix how fast the "
              "other weights should learn.\n")
