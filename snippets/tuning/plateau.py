"""Speed or capability: the tuned rules run on, four times past the tuning's budget.

``sdpa.studies.run_plateau``: each rule at the rate that was best after 150 steps, on the
five confirmation seeds, trained longer (the quick profile: d_k = 64 and 600 steps; the
full profile: every d_k and 3,000 steps). Read three ways: the loss at the tuning's
budget, the steps until the loss (smoothed as the final loss is) first falls below a
stated value, and the loss at the end.
"""

import math

import sdpa
from sdpa.studies import plateau_study, run_plateau
from sdpa.training import OPTIMIZER_LABELS


def plateau(study=None):
    study = study or plateau_study()
    rows = []
    for (optimizer, d_k, rule), run in run_plateau(study).items():
        reached = [s for s in run.steps_to.tolist() if math.isfinite(s)]
        rows.append({
            "optimizer": optimizer, "d_k": d_k, "rule": rule.label, "lr": run.arm.best_lr,
            "early": run.early.tolist(), "final": run.final.tolist(),
            "reached": len(reached), "seeds": len(run.final),
            "median_steps": sorted(run.steps_to.tolist())[len(run.final) // 2],
            "steps": list(run.steps), "curve": run.loss.mean(1).tolist(),
        })
    return {"rows": rows, "budget": study.tuning.steps, "steps": study.steps,
            "threshold": study.threshold}


result = plateau()


def mean_se(values):
    diverged = sum(not math.isfinite(v) for v in values)
    if diverged:
        return f"diverged ({diverged} of {len(values)} seeds)"
    n = len(values)
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    return f"{mean:.3f} ± {sd / n ** 0.5:.3f}"


def steps(r):
    if r["reached"] == 0:
        return f"none within {result['steps']}"
    return f"{r['median_steps']:.0f} (median; {r['reached']} of {r['seeds']} seeds)" \
        if math.isfinite(r["median_steps"]) else f"{r['reached']} of {r['seeds']} seeds"


print(sdpa.markdown_table(
    ["optimiser", "d_k", "scaling", "rate", f"loss at step {result['budget']}",
     f"steps to {result['threshold']:g}", f"loss at step {result['steps']}"],
    [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], r["rule"], f"{r['lr']:.3g}",
      mean_se(r["early"]), steps(r), mean_se(r["final"])) for r in result["rows"]],
    align="lrlrrrr",
    caption=f"Each rule at its best rate after {result['budget']} steps, run for "
    f"{result['steps']} on the five confirmation seeds: mean ± standard error of the final "
    "loss (the mean of the last 8 records), and the steps until that smoothed loss first "
    f"falls below {result['threshold']:g}.",
))



def mean(values):
    return sum(values) / len(values)


lines = []
for optimizer in ("adam", "sgd"):
    for d_k in sorted({r["d_k"] for r in result["rows"]}):
        at = {r["rule"]: r for r in result["rows"]
              if (r["optimizer"], r["d_k"]) == (optimizer, d_k)}
        none, scaled = at["none"], at["1/√d_k"]
        falling = mean(none["final"]) < mean(none["early"])
        lines.append(
            f"{OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}: without the factor the loss "
            f"{'is still falling' if falling else 'has stopped falling'} "
            f"({mean(none['early']):.3f} at step {result['budget']}, "
            f"{mean(none['final']):.3f} at step {result['steps']}) and ends "
            f"{mean(none['final']) / mean(scaled['final']):.0f} times 1/√d_k's "
            f"({mean(scaled['final']):.3f}); {none['reached']} of {none['seeds']} seeds reach "
            f"{result['threshold']:g}, against {scaled['reached']} of {scaled['seeds']}.")
print("\n".join(f"- {line}" for line in lines) + "\n")

figure = sdpa.Figure(
    "tuning-plateau",
    caption=f"The tuned rules run past the tuning's budget (dotted line, step "
    f"{result['budget']}): loss per record, mean over the five confirmation seeds, log scale.",
    alt="Two panels, Adam and SGD, of loss against training step on a log scale for the "
    "three scale rules at their tuned rates; a dotted vertical line marks step 150.",
    ncols=2, size=(7.4, 3.0),
)
with figure as axes:
    for ax, optimizer in zip(axes, ("adam", "sgd")):
        mine = [r for r in result["rows"] if r["optimizer"] == optimizer]
        for color, style, r in zip(sdpa.PALETTE, ("-", "--", ":") * 3, mine):
            label = r["rule"] if len({x["d_k"] for x in mine}) == 1 else f"{r['rule']}, {r['d_k']}"
            ax.plot(r["steps"], r["curve"], style, color=color, label=label)
        ax.axvline(result["budget"], color=sdpa.INK, ls=":", lw=1)
        ax.set(yscale="log", xlabel="training step", title=OPTIMIZER_LABELS[optimizer])
    axes[0].set(ylabel="loss (nats)")
    axes[0].legend(fontsize=7)
print(figure.html)
