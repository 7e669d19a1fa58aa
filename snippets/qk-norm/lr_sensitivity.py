"""LR sensitivity: the final loss against the learning rate, for each arm.

The same sweep as the logit-growth figure (memoised, trained once per process). For
each arm we take the held-out loss after training at every learning rate, averaged
over the seeds, and compute Wortsman et al.'s LR sensitivity: the mean over learning
rates of min(L(lr), L0) - L*, with L0 the loss at initialisation and L* the arm's best.
We also count the runs that learned the task (held-out loss below 0.2) and the largest
difference between the seeds of one learning rate.
"""

import sdpa
from sdpa.gpt import lr_sensitivity, run_gpt
from sdpa.sizes import sizes
from sdpa.qk_norm import QK_NORM_ARMS

QK_NORM_SWEEP = sizes().qk_norm

LEARNED = 0.2  # a held-out loss below this: the run found the copy circuit


def sensitivity_table(sweep=QK_NORM_SWEEP):
    history = run_gpt(sweep)
    initial = history.records.initial_loss.mean().item()
    rows = []
    for name, config in QK_NORM_ARMS.items():
        records = history.arm(config)
        final = records.final_loss  # (lrs, seeds)
        mean = final.mean(-1)
        rows.append(
            {
                "arm": name,
                "loss": mean.tolist(),
                "low": final.amin(-1).tolist(),
                "high": final.amax(-1).tolist(),
                "best_loss": mean.min().item(),
                "best_lr": sweep.lrs[int(mean.argmin())],
                "sensitivity": lr_sensitivity(mean, initial),
                # the largest logit at the last step, per learning rate (mean over seeds)
                "final_max_logit": records.max_logit[-1].mean(-1).tolist(),
                "learned": int((final < LEARNED).sum()),
                "runs": final.numel(),
                "seed_difference": (final.amax(-1) - final.amin(-1)).max().item(),
            }
        )
    return {"lrs": list(sweep.lrs), "initial_loss": initial, "rows": rows}


result = sensitivity_table()
vocab = QK_NORM_SWEEP.arms[0].vocab

print(
    sdpa.markdown_table(
        ["arm", "best final loss", "at learning rate", "largest logit there, last step",
         "LR sensitivity", f"runs below {LEARNED}", "largest difference between seeds"],
        [
            (QK_NORM_ARMS[r["arm"]].label, r["best_loss"], r["best_lr"],
             r["final_max_logit"][result["lrs"].index(r["best_lr"])], r["sensitivity"],
             f"{r['learned']} of {r['runs']}", r["seed_difference"])
            for r in result["rows"]
        ],
        caption=f"Held-out loss after {QK_NORM_SWEEP.steps} steps, mean over "
        f"{len(QK_NORM_SWEEP.seeds)} seeds; the loss at initialisation is "
        f"{sdpa.fmt(result['initial_loss'])} (ln {vocab}). Lower LR sensitivity means more "
        "forgiving. The last columns count the runs (rates × seeds) that learned the task, and "
        "give the largest difference between the seeds of one rate.",
    )
)

figure = sdpa.Figure(
    "qk-norm-lr-sensitivity",
    caption="Held-out loss after the last step against the learning rate (log scale; line: "
    "mean over seeds, band: their range; dotted: the loss at initialisation). At the two "
    "lowest rates the soft-cap curve hides the 1/√d_k one: its logits stay far below the cap.",
    alt="Five curves of final loss against learning rate. Each dips to a minimum at one "
    "learning rate and rises back to the initial loss at the highest ones; the QK-norm "
    "curves are the lowest at the smallest learning rates.",
    size=(5.6, 3.5),
)
with figure as ax:
    for color, r in zip(sdpa.PALETTE, result["rows"]):
        ax.fill_between(result["lrs"], r["low"], r["high"], color=color, alpha=0.2, linewidth=0)
        ax.plot(result["lrs"], r["loss"], "o-", color=color, label=QK_NORM_ARMS[r["arm"]].label)
    ax.axhline(result["initial_loss"], color=sdpa.INK, linestyle=":", linewidth=1)
    ax.set(xscale="log", xlabel="peak learning rate (Adam, cosine decay)",
           ylabel="final held-out loss")
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
print(figure.html)
