"""Do the gains learn the factor away? QK-norm without 1/sqrt(d_k) against QK-norm with it.

The same sweep as the logit-growth figure (memoised, trained once per process). Both arms
start from the same weights and gains (one), so at the first step the arm without the
factor has logits exactly sqrt(d_k) times larger. If its gains learned the factor away,
that ratio would fall towards 1 during training. For every learning rate we take, seed by
seed (the two arms share their seeds), the ratio of the largest logit at the last step and
the ratio of the bounds the gains allow then; we print the mean over the seeds and the
range of the largest-logit ratio, and the mean over the runs at the three lowest learning
rates (at the two highest the ratio scatters, and at the highest almost no run learns the
task: the sensitivity table).
"""

import math

import sdpa
from sdpa.gpt import run_gpt
from sdpa.sizes import sizes
from sdpa.qk_norm import QK_NORM_ARMS

QK_NORM_SWEEP = sizes().qk_norm

LOW = sorted(QK_NORM_SWEEP.lrs)[:3]  # below the two highest rates, where the ratio scatters


def gains_ratio(sweep=QK_NORM_SWEEP):
    history = run_gpt(sweep)
    without, scaled = (history.arm(QK_NORM_ARMS[name]) for name in ("qk_norm_unscaled", "qk_norm"))
    logit = without.max_logit[-1] / scaled.max_logit[-1]  # (lrs, seeds), paired by seed
    bound = without.bound[-1] / scaled.bound[-1]
    rows = [{"lr": lr, "ratio": logit[i].mean().item(), "low": logit[i].min().item(),
             "high": logit[i].max().item(), "bound_ratio": bound[i].mean().item()}
            for i, lr in enumerate(sweep.lrs)]
    low = [sweep.lrs.index(lr) for lr in LOW]
    return {"rows": rows, "per_run_low": logit[low].flatten().tolist(),
            "mean_low": logit[low].mean().item(), "bound_low": bound[low].mean().item(),
            "start": (without.max_logit[0] / scaled.max_logit[0]).mean().item(),
            "sqrt_d_k": math.sqrt(QK_NORM_ARMS["qk_norm"].d_head)}


result = gains_ratio()

print(
    sdpa.markdown_table(
        ["learning rate", "largest logit, no scale over with 1/√d_k", "range over seeds",
         "bound, no scale over with 1/√d_k"],
        [(r["lr"], r["ratio"], f"{sdpa.fmt(r['low'])} to {sdpa.fmt(r['high'])}",
          r["bound_ratio"]) for r in result["rows"]],
        caption=f"Both QK-norm arms at the last step, seed by seed, mean over "
        f"{len(QK_NORM_SWEEP.seeds)} seeds. At the first step the ratio is "
        f"{sdpa.fmt(result['start'])} (√d_k = {sdpa.fmt(result['sqrt_d_k'])}); at the three "
        f"lowest rates it ends at {sdpa.fmt(result['mean_low'])} on average. Bound: the largest "
        "logit the gains allow.",
    )
)
