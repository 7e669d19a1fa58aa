"""Speed or capability: the tuned rules run on past the tuning's budget.

``sdpa.studies.run_plateau``: each rule at the rate that was best after 150 steps, on the
confirmation seeds, trained longer (``sizes().plateau``; the quick profile: d_k = 64 and
600 steps; the full profile: every d_k and 3,000 steps, and the 4-head block too). Read
three ways: the loss at the tuning's budget, the steps until the loss (smoothed as the
final loss is) first falls below a stated value, and the loss at the end.
"""

import math

import torch

import sdpa
from sdpa.sizes import sizes
from sdpa.studies import run_plateau
from sdpa.training import OPTIMIZER_LABELS

SIZES = sizes()


def curve(run, points=100):
    """The figure's line: the loss smoothed as the final loss is, mean over the seeds, at
    about ``points`` records."""
    every = max(1, len(run.steps) // points)
    return {"steps": list(run.steps[::every]), "curve": run.smooth.mean(1)[::every].tolist()}


def row(study, optimizer, d_k, rule, run):
    """One table row: the three readings, the curve, and whether it still falls at the end."""
    reached = [s for s in run.steps_to.tolist() if math.isfinite(s)]
    tenth = max(1, len(run.steps) // 10)  # the last tenth of the run against the one before
    drop = run.loss[-2 * tenth:-tenth].mean(0) - run.loss[-tenth:].mean(0)  # per seed
    finite = drop[torch.isfinite(drop)]
    return {
        "shape": "one head" if study.tuning.heads is None else f"{study.tuning.heads} heads",
        "optimizer": optimizer, "d_k": d_k, "rule": rule.label, "lr": run.arm.best_lr,
        "early": run.early.tolist(), "final": run.final.tolist(),
        "reached": len(reached), "seeds": len(run.final),
        "median_steps": sorted(run.steps_to.tolist())[len(run.final) // 2],
        **curve(run),
        # still falling at the end: the last tenth below the one before, by 2 SE
        "falling": len(finite) > 1 and finite.mean().item()
        > 2 * finite.std().item() / len(finite) ** 0.5,
    }


def plateau(studies=(SIZES.plateau, SIZES.block_plateau)):
    studies = [study for study in studies if study is not None]  # no block in quick
    rows = [row(study, optimizer, d_k, rule, run) for study in studies
            for (optimizer, d_k, rule), run in run_plateau(study).items()]
    first = studies[0]
    assert all((s.tuning.steps, s.steps, s.threshold, s.tuning.confirm_seeds)
               == (first.tuning.steps, first.steps, first.threshold, first.tuning.confirm_seeds)
               for s in studies), "one table: one budget, length, threshold and seeds"
    return {"rows": rows, "budget": first.tuning.steps, "steps": first.steps,
            "threshold": first.threshold, "seeds": len(first.tuning.confirm_seeds)}


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
    ["model", "optimiser", "d_k", "scaling", "rate", f"loss at step {result['budget']}",
     f"steps to {result['threshold']:g}", f"loss at step {result['steps']}"],
    [(r["shape"], OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], r["rule"], f"{r['lr']:.3g}",
      mean_se(r["early"]), steps(r), mean_se(r["final"])) for r in result["rows"]],
    align="llrlrrrr",
    caption=f"Each rule at its best rate after {result['budget']} steps, run for "
    f"{result['steps']} on the {result['seeds']} confirmation seeds: mean ± standard error "
    "of the final loss (the mean of the last 8 records), and the steps until that smoothed "
    f"loss first falls below {result['threshold']:g}.",
))



def mean(values):
    return sum(values) / len(values)


def times(ratio):
    return f"{ratio:.2g}" if ratio < 100 else f"{ratio:,.0f}"


def geometric_mean(values):
    return math.exp(mean([math.log(v) for v in values])) if all(map(math.isfinite, values)) \
        else math.inf


#: (model, optimiser, d_k) of each group of rows, in the table's order, and its line
groups = list(dict.fromkeys((r["shape"], r["optimizer"], r["d_k"]) for r in result["rows"]))
lines = []
for shape, optimizer, d_k in groups:
    at = {r["rule"]: r for r in result["rows"] if (r["shape"], r["optimizer"], r["d_k"])
          == (shape, optimizer, d_k)}
    none, scaled = at["none"], at["1/√d_k"]
    lines.append(
        f"{shape.capitalize()}, {OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}: without the factor "
        f"the loss goes from {mean(none['early']):.3g} at step {result['budget']} to "
        f"{mean(none['final']):.3g} at step {result['steps']}, "
        f"{'still falling' if none['falling'] else 'no longer falling clearly'} at the "
        f"end, {times(mean(none['final']) / mean(scaled['final']))} times 1/√d_k's "
        f"({mean(scaled['final']):.3g}); {none['reached']} of {none['seeds']} seeds reach "
        f"{result['threshold']:g}, against {scaled['reached']} of {scaled['seeds']}.")
print("\n".join(f"- {line}" for line in lines) + "\n")


def verdict():
    """Whether the unscaled head still ends above 1/sqrt(d_k) after the long run, where."""
    ratios, falling = {}, []
    for group in groups:
        at = {r["rule"]: r for r in result["rows"] if (r["shape"], r["optimizer"], r["d_k"])
              == group}
        ratios[group] = geometric_mean(at["none"]["final"]) / geometric_mean(at["1/√d_k"]["final"])
        if at["none"]["falling"]:
            falling.append(group)
    above = [g for g, ratio in ratios.items() if ratio > 2]
    return {"ratios": ratios, "above": above, "falling": falling,
            "profile": sdpa.runtime.profile()}


def setting(group):
    shape, optimizer, d_k = group
    return f"{shape}, {OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}"


ended = verdict()
spread = sorted(ended["ratios"].values())
text = (f"After {result['steps']} steps, each rule at the rate tuned for {result['budget']}, "
        f"the head without the factor ends at least twice as high in loss as 1/√d_k in "
        f"{len(ended['above'])} of {len(groups)} settings "
        f"({times(spread[0])} to {times(spread[-1])} times, geometric means over "
        f"{result['seeds']} seeds)"
        + ("" if len(ended["above"]) == len(groups) else ", not in: "
           + "; ".join(setting(g) for g in groups if g not in ended["above"]))
        + ". Its loss is still falling at the end in "
        + (f"{len(ended['falling'])} of them ({'; '.join(map(setting, ended['falling']))})"
           if ended["falling"] else "none of them")
        + ". A rate tuned for the longer run is not tried.")
if ended["profile"] == "quick":
    print('!!! note "Quick build: one head dimension, 600 steps"\n'
          "    The full build runs every d_k, both optimisers and the 4-head block for 3,000 "
          "steps, and its verdict is the one the page stands by. What this build's numbers "
          "show, in the words the full build uses:\n\n    " + text + "\n")
else:
    print('!!! success "Verdict (full profile)"\n    ' + text + "\n")

panels = list(dict.fromkeys((shape, optimizer) for shape, optimizer, _ in groups))
figure = sdpa.Figure(
    "tuning-plateau",
    caption=f"The tuned rules run past the tuning's budget (dotted line, step "
    f"{result['budget']}): the loss smoothed as the final loss is (the mean of the last 8 "
    f"records), mean over the {result['seeds']} confirmation "
    "seeds, log scale.",
    alt=f"{len(panels)} panels ({', '.join(f'{s}, {OPTIMIZER_LABELS[o]}' for s, o in panels)}) "
    "of loss against training step on a log scale for the three scale rules at their tuned "
    f"rates; a dotted vertical line marks step {result['budget']}.",
    ncols=len(panels), size=(3.7 * len(panels), 3.0),
)
with figure as axes:
    for ax, (shape, optimizer) in zip(axes, panels):
        mine = [r for r in result["rows"] if (r["shape"], r["optimizer"]) == (shape, optimizer)]
        rules = list(dict.fromkeys(r["rule"] for r in mine))
        d_ks = sorted({r["d_k"] for r in mine})
        styles = ("-", "--", ":")
        for r in mine:  # colour: the rule; line style: d_k (one d_k in the quick profile)
            ax.plot(r["steps"], r["curve"], styles[d_ks.index(r["d_k"]) % 3],
                    color=sdpa.PALETTE[rules.index(r["rule"])])
        ax.axvline(result["budget"], color=sdpa.INK, ls=":", lw=1)
        title = OPTIMIZER_LABELS[optimizer] + ("" if shape == "one head" else f", {shape}")
        ax.set(yscale="log", xlabel="training step", title=title)
        # one entry per rule (colour) and, where there are several, per d_k (line style)
        keys = [ax.plot([], [], color=sdpa.PALETTE[i], label=rule)[0]
                for i, rule in enumerate(rules)]
        if len(d_ks) > 1:
            keys += [ax.plot([], [], styles[i % 3], color=sdpa.INK, label=f"d_k = {d_k}")[0]
                     for i, d_k in enumerate(d_ks)]
        ax.legend(handles=keys, fontsize=6, ncol=2 if len(d_ks) > 1 else 1, loc="lower left")
    axes[0].set(ylabel="loss (nats)")
print(figure.html)
