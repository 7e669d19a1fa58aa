"""Why muP prefers 1/d: the size of q.k against d_k, before and after training.

The recall head is trained at d_k = 16, 32 and 128 under each scaling (the temperature
study's runs, ``sdpa.temperature``). We record the largest raw score |q.k| in a batch
(the logit before the scale factor) at initialisation and after training, and fit the
exponent of d_k in |q.k| across the three head dimensions: through the seeds' means
for the table, and seed by seed for the line under it (the runs at the three widths
share their seeds), whose t interval says how far this build pins the rise down.
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm, run_recall
from sdpa.sizes import sizes
from sdpa.stats import paired

STUDY = sizes().temperature
RULES = [Scale.NONE, Scale.INV, Scale.INV_SQRT]


def slope(xs, ys):
    """Least-squares slope of log y against log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def logit_growth(head_dims=STUDY.d_ks):
    rows = []
    for rule in RULES:
        for d_k in head_dims:
            curves = run_recall(STUDY.experiment(d_k)).arm(Arm(rule))
            raw = curves.max_logit / curves.scale  # |q.k| before the scale factor
            rows.append({"scale": rule, "d_k": d_k, "raw_before": raw[0].mean().item(),
                         "raw_after": raw[-1].mean().item(), "raw_before_seeds": raw[0].tolist(),
                         "raw_after_seeds": raw[-1].tolist(),
                         "scaled_after": curves.max_logit[-1].mean().item()})
    fits, rises = {}, {}
    for rule in RULES:
        mine = [r for r in rows if r["scale"] is rule]
        dims = [r["d_k"] for r in mine]
        fits[rule] = {when: slope(dims, [r[f"raw_{when}"] for r in mine])
                      for when in ("before", "after")}
        per_seed = {when: [slope(dims, values) for values in
                           zip(*(r[f"raw_{when}_seeds"] for r in mine))]
                    for when in ("before", "after")}
        rises[rule] = paired(per_seed["after"], per_seed["before"])  # after - before, by seed
    return {"rows": rows, "fits": fits, "rises": rises}


result = logit_growth()
experiment = STUDY.experiment(STUDY.d_ks[0])
n_seeds = len(STUDY.seeds)

print(
    sdpa.markdown_table(
        ["scaling", "exponent, at initialisation", "exponent, after training",
         *(f"scaled logit after training, d_k = {d}" for d in STUDY.d_ks)],
        [(rule.label, fit["before"], fit["after"],
          *(r["scaled_after"] for r in result["rows"] if r["scale"] is rule))
         for rule, fit in result["fits"].items()],
        caption="Exponent: the least-squares slope of log |q·k| against log d_k (the largest raw "
        f"score in a batch of {experiment.batch} rows of {experiment.n_pairs} keys, mean of "
        f"{n_seeds} seeds): 0.5 is the √d_k of independent components, 1 the d_k of aligned "
        "ones. The last columns: the largest logit after the scale factor.",
    )
)
rises = "; ".join(f"{rule.label} {sdpa.fmt(i.mean)} [{sdpa.fmt(i.low)}, {sdpa.fmt(i.high)}]"
                  for rule, i in result["rises"].items())
print(f"\nSeed by seed, training raised the exponent by: {rises} (mean over the {n_seeds} "
      "seeds, 95% t interval).\n")

figure = sdpa.Figure(
    "temperature-logit-growth",
    caption="The largest raw score |q·k| in a batch against d_k, at initialisation (dotted, the "
    "same for every arm) and after training (solid, one line per scaling, mean of "
    f"{n_seeds} seeds). The grey guides have slopes 1/2 and 1.",
    alt="Log-log plot of the largest raw score against head dimension 16, 32, 128: the initial "
    "scores rise slowly, the trained scores are an order of magnitude larger and rise more "
    "steeply.",
    size=(5.4, 3.4),
)
with figure as ax:
    dims = list(STUDY.d_ks)
    for color, rule in zip(sdpa.PALETTE, RULES):
        mine = [r for r in result["rows"] if r["scale"] is rule]
        ax.plot(dims, [r["raw_after"] for r in mine], "o-", color=color,
                label=f"{rule.label}, trained")
    first = [r for r in result["rows"] if r["scale"] is RULES[0]]
    ax.plot(dims, [r["raw_before"] for r in first], "s:", color=sdpa.INK, label="initialisation")
    anchor = first[0]["raw_after"]
    for power, style in ((0.5, "--"), (1.0, "-.")):
        ax.plot(dims, [anchor * (d / dims[0]) ** power for d in dims], style,
                color=sdpa.PALETTE[7], lw=1, label=f"slope {power:g}")
    ax.set(xscale="log", yscale="log", xlabel="head dimension d_k",
           ylabel="largest |q·k| in a batch")
    ax.minorticks_off()  # only the three measured widths on the x axis
    ax.set_xticks(dims, [str(d) for d in dims])
    ax.legend(fontsize=7.5)
print(figure.html)
