"""Speed or capability: the tuned rules run on, four times past the tuning's budget.

``sdpa.studies.run_plateau``: each rule at the rate that was best after 150 steps, on the
five confirmation seeds, trained longer (the quick profile: d_k = 64 and 600 steps; the
full profile: every d_k and 3,000 steps). Read three ways: the loss at the tuning's
budget, the steps until the loss (smoothed as the final loss is) first falls below a
stated value, and the loss at the end.
"""

import math

import torch

import sdpa
from sdpa.studies import plateau_study, run_plateau
from sdpa.training import OPTIMIZER_LABELS


def plateau(study=None):
    study = study or plateau_study()
    rows = []
    for (optimizer, d_k, rule), run in run_plateau(study).items():
        reached = [s for s in run.steps_to.tolist() if math.isfinite(s)]
        tenth = max(1, len(run.steps) // 10)  # the last tenth of the run against the one before
        drop = run.loss[-2 * tenth:-tenth].mean(0) - run.loss[-tenth:].mean(0)  # per seed
        finite = drop[torch.isfinite(drop)]
        rows.append({
            "optimizer": optimizer, "d_k": d_k, "rule": rule.label, "lr": run.arm.best_lr,
            "early": run.early.tolist(), "final": run.final.tolist(),
            "reached": len(reached), "seeds": len(run.final),
            "median_steps": sorted(run.steps_to.tolist())[len(run.final) // 2],
            "steps": list(run.steps), "curve": run.loss.mean(1).tolist(),
            # still falling at the end: the last tenth below the one before, by 2 SE
            "falling": len(finite) > 1 and finite.mean().item()
            > 2 * finite.std().item() / len(finite) ** 0.5,
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
    return f"{mean:.3g} ± {sd / n ** 0.5:.2g}"


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
        lines.append(
            f"{OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}: without the factor the loss goes "
            f"from {mean(none['early']):.3g} at step {result['budget']} to "
            f"{mean(none['final']):.3g} at step {result['steps']}, "
            f"{'still falling' if none['falling'] else 'no longer falling clearly'} at the "
            f"end, {mean(none['final']) / mean(scaled['final']):.2g} times 1/√d_k's "
            f"({mean(scaled['final']):.3g}); {none['reached']} of {none['seeds']} seeds reach "
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
        rules = list(dict.fromkeys(r["rule"] for r in mine))
        d_ks = sorted({r["d_k"] for r in mine})
        for r in mine:  # colour: the rule; line style: d_k (one d_k in the quick profile)
            label = r["rule"] if len(d_ks) == 1 else f"{r['rule']}, d_k = {r['d_k']}"
            ax.plot(r["steps"], r["curve"], ("-", "--", ":")[d_ks.index(r["d_k"]) % 3],
                    color=sdpa.PALETTE[rules.index(r["rule"])], label=label)
        ax.axvline(result["budget"], color=sdpa.INK, ls=":", lw=1)
        ax.set(yscale="log", xlabel="training step", title=OPTIMIZER_LABELS[optimizer])
    axes[0].set(ylabel="loss (nats)")
    axes[0].legend(fontsize=7)
print(figure.html)
