"""Attention-logit growth: the largest logit against the training step, at a high learning rate.

Five arms of the same two-layer transformer (``sdpa.models.GPT``), trained on the copy task
by ``sdpa.gpt.run_gpt``: 1/sqrt(d_k), no scale, QK-norm with and without
1/sqrt(d_k), and a tanh soft cap. At the highest learning rate of the sweep we plot the
largest logit any softmax saw at each step, the mean over the seeds with the range of the
seeds as a band.
"""

import sdpa
from sdpa.gpt import run_gpt
from sdpa.sizes import sizes
from sdpa.qk_norm import QK_NORM_ARMS

QK_NORM_SWEEP = sizes().qk_norm

HIGH_LR = max(QK_NORM_SWEEP.lrs)


def logit_growth(sweep=QK_NORM_SWEEP, lr=HIGH_LR):
    history = run_gpt(sweep)
    curves = {}
    for name, config in QK_NORM_ARMS.items():
        records = history.arm(config, lr)
        per_seed = records.max_logit  # (steps, seeds)
        curves[name] = {
            "mean": per_seed.mean(-1).tolist(),
            "low": per_seed.amin(-1).tolist(),
            "high": per_seed.amax(-1).tolist(),
            "raw_final": records.max_raw[-1].mean().item(),
            # per step and seed; the QK-norm bound from the gains (QK-norm arms only)
            "per_seed": per_seed.T.tolist(),
            "bound": records.bound.T.tolist(),
            "qk_norm": config.qk_norm is not None,
            "softcap": config.softcap,
        }
    return {"lr": lr, "curves": curves}


result = logit_growth()

print(
    sdpa.markdown_table(
        ["arm", "largest logit, first step", "largest logit, last step",
         "before the cap, last step"],
        [(QK_NORM_ARMS[name].label, c["mean"][0], c["mean"][-1], c["raw_final"])
         for name, c in result["curves"].items()],
        caption=f"Learning rate {result['lr']:g}, mean over {len(QK_NORM_SWEEP.seeds)} seeds. "
        "The last column is the logit before the soft cap (the same as the logit for the other "
        "arms).",
    )
)

figure = sdpa.Figure(
    "qk-norm-logit-growth",
    caption=f"The largest attention logit during training at learning rate {result['lr']:g} "
    "(log scale; line: mean over seeds, band: their range). Without a normaliser it grows by "
    "orders of magnitude; with QK-norm it never leaves the bound that the norms and gains set.",
    alt="Line plot, log scale, of the largest attention logit against the training step for "
    "five arms. The 1/sqrt(d_k) and no-scale lines climb steeply, to hundreds and thousands; "
    "the two QK-norm lines stay low and flat; the soft-cap line rises and flattens at the cap.",
    size=(5.6, 3.5),
)
with figure as ax:
    for color, (name, c) in zip(sdpa.PALETTE, result["curves"].items()):
        steps = range(1, len(c["mean"]) + 1)
        ax.fill_between(steps, c["low"], c["high"], color=color, alpha=0.2, linewidth=0)
        ax.plot(steps, c["mean"], color=color, label=QK_NORM_ARMS[name].label)
    ax.set(yscale="log", xlabel="training step", ylabel="largest attention logit")
    ax.legend(fontsize=7.5)
print(figure.html)
