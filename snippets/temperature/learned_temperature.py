"""A learned temperature: a per-head scale c, learned as log c from c = 1/sqrt(d_k).

The same recall runs at d_k = 128 as the table above, with one more arm whose scale
is a parameter trained with the weights (same optimiser, same learning rate). Left: the
loss, fixed against learned. Right: the learned scale relative to its start, and the
largest raw score |q.k| relative to its start, per seed.
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm, run_recall
from sdpa.sizes import sizes
from sdpa.stats import mean, t_interval

STUDY = sizes().temperature
LOSS_TARGET = 0.5


def learned_temperature(d_k=STUDY.main_d_k):
    history = run_recall(STUDY.experiment(d_k))
    out = {"d_k": d_k, "steps": history.step.tolist(), "init_scale": d_k**-0.5}
    for name, arm in (("fixed", Arm(Scale.INV_SQRT)), ("learned", STUDY.learned)):
        curves = history.arm(arm)
        raw = curves.max_logit / curves.scale  # |q.k| before the scale factor
        out[name] = {
            "loss": curves.loss.mean(1).tolist(),
            "final_loss": curves.loss[-1].tolist(),
            "final_accuracy": curves.accuracy[-1].mean().item(),
            "steps_to_target": history.steps_to(curves.loss, LOSS_TARGET).tolist(),
            "scale_ratio": (curves.scale / curves.scale[0]).T.tolist(),  # per seed, over steps
            "raw_ratio": (raw / raw[0]).T.tolist(),
            "final_scale": curves.scale[-1].tolist(),
        }
    return out


result = learned_temperature()
n_seeds = len(STUDY.seeds)


def geometric(ratios):
    """The geometric mean of per-seed ratios, with its 95% t interval (on the log scale)."""
    i = t_interval([math.log(r) for r in ratios])
    return f"{math.exp(i.mean):.2f} [{math.exp(i.low):.2f}, {math.exp(i.high):.2f}]"


print(
    sdpa.markdown_table(
        ["arm", "scale at the end (per seed)", "× its start", "largest raw score q·k, × its start",
         f"steps to loss < {LOSS_TARGET}", "loss", "accuracy"],
        [(name, " / ".join(f"{s:.4f}" for s in r["final_scale"]),
          mean([x[-1] for x in r["scale_ratio"]]), mean([x[-1] for x in r["raw_ratio"]]),
          " / ".join(f"{s:.0f}" for s in r["steps_to_target"]), mean(r["final_loss"]),
          r["final_accuracy"])
         for name, r in (("fixed 1/√d_k", result["fixed"]), ("learned", result["learned"]))],
        caption=f"d_k = {result['d_k']}; both arms start at c = 1/√{result['d_k']} = "
        f"{result['init_scale']:.4f}. Loss, accuracy and the two \"× its start\" columns after "
        f"{result['steps'][-1]} steps: arithmetic means of {n_seeds} seeds (the line below gives "
        "geometric means, with intervals).",
    )
)

learned = result["learned"]
print("\nIn this build the learned scale ends at "
      f"{geometric([r[-1] for r in learned['scale_ratio']])} times its start, while the "
      "largest raw score |q·k| grows "
      f"{geometric([r[-1] for r in learned['raw_ratio']])}-fold (geometric mean over the "
      f"{n_seeds} seeds, 95% t interval).\n")

figure = sdpa.Figure(
    "temperature-learned-scale",
    caption=f"Left: training loss with the scale fixed at 1/√d_k and learned from it (mean of "
    f"{n_seeds} seeds). Right, per seed: the learned scale (solid) and the largest raw score "
    "|q·k| (dashed), each relative to its start.",
    alt="Left: two nearly coincident loss curves falling to near zero. Right: "
    f"{n_seeds} flat solid lines near 1 and {n_seeds} dashed lines rising on a log axis.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    left.plot(result["steps"], result["fixed"]["loss"], color=sdpa.PALETTE[2],
              label="fixed 1/√d_k")
    left.plot(result["steps"], result["learned"]["loss"], "--", color=sdpa.PALETTE[4],
              label="learned")
    left.set(xlabel="training step", ylabel="loss (nats)")
    left.legend()
    learned = result["learned"]
    for seed, (scale, raw) in enumerate(zip(learned["scale_ratio"], learned["raw_ratio"])):
        right.plot(result["steps"], scale, color=sdpa.PALETTE[seed], label=f"seed {seed}: scale")
        right.plot(result["steps"], raw, "--", color=sdpa.PALETTE[seed],
                   label=f"seed {seed}: |q·k|")
    right.set(yscale="log", xlabel="training step", ylabel="relative to step 0")
    right.legend(fontsize=7, ncols=2)
print(figure.html)
