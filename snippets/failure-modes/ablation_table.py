"""The training ablation in one table: every arm, both optimisers, both initialisations.

Same runs as the loss and entropy figures (``sdpa.recall.scale_ablation``, memoised).
Final loss is the mean of the last 8 recorded batches (steps 165 to 200); "steps to
loss < 0.5" is the first recorded step at which a seed's batch loss falls below 0.5;
the gradient ratio is ‖∇W_Q‖ / ‖∇W_V‖ on the first batch.
"""

import math

import sdpa
from sdpa.recall import final, scale_ablation, steps_to

THRESHOLD = 0.5

sdpa.seed(6)
runs = scale_ablation()


def summarise(runs):
    rows = []
    for (opt, d_k), (cfg, h) in runs.items():
        reach = steps_to(h, "loss", THRESHOLD)
        last_loss, last_entropy = final(h, "loss"), final(h, "entropy")
        for a, arm in enumerate(cfg.arms):
            init, scaling = arm.label.split(", ")
            hit = [s for s in reach[a].tolist() if math.isfinite(s)]
            rows.append(
                {
                    "optimizer": opt, "d_k": d_k, "init": init, "scaling": scaling,
                    "final_loss": last_loss[a].tolist(),
                    "steps_to_threshold": reach[a].tolist(),
                    "reached": len(hit),
                    "median_steps": sorted(hit)[len(hit) // 2] if len(hit) == len(cfg.seeds) else math.inf,
                    "entropy_start": h["entropy"][0, a].tolist(),
                    "entropy_end": last_entropy[a].tolist(),
                    "ratio_q_v": (h["grad_q"][0, a] / h["grad_v"][0, a]).tolist(),
                }
            )
    return rows


result = summarise(runs)
mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
print(
    sdpa.markdown_table(
        ["optimiser", "init", "d_k", "scaling", "final loss, mean (min–max)", f"steps to loss < {THRESHOLD}",
         "entropy at step 0", "entropy at the end", "‖∇W_Q‖/‖∇W_V‖ at step 0"],
        [
            ("Adam" if r["optimizer"] == "adam" else "SGD", r["init"], r["d_k"], r["scaling"],
             f"{sdpa.fmt(mean(r['final_loss']))} ({sdpa.fmt(min(r['final_loss']))}–{sdpa.fmt(max(r['final_loss']))})",
             f"{r['median_steps']:.0f}" if math.isfinite(r["median_steps"]) else f"not reached ({r['reached']}/3 seeds did)",
             mean(r["entropy_start"]), mean(r["entropy_end"]), mean(r["ratio_q_v"]))
            for r in sorted(result, key=lambda r: (r["optimizer"], r["init"] != "unit", r["d_k"]))
        ],
        align="llrlrrrrr",
        caption="Three seeds per arm; entropies and ratios are means over seeds, entropy in nats "
        f"(uniform over 8 pairs: ln 8 ≈ {math.log(8):.2f}). Steps: median over seeds, recorded every "
        "5 steps, 200 steps in all; chance loss is ln 32 ≈ 3.47.",
    )
)
