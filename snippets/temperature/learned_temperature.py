"""A learned temperature: a per-head scale c, learned as log c from c = 1/sqrt(d_k).

The same recall runs at d_k = 128 as the table above, with one more arm whose scale
is a parameter trained with the weights (same optimiser, same learning rate). Left: the
loss, fixed against learned. Right: the learned scale relative to its start, and the
largest raw score |q.k| relative to its start, per seed.
"""

import sdpa
from sdpa.recall import run, steps_to
from sdpa.temperature import MAIN_D_K, arm_index, scale_experiment

FIXED, LEARNED = "1/√d_k", "learned, from 1/√d_k"


def learned_temperature(d_k=MAIN_D_K):
    sdpa.seed(0)
    cfg = scale_experiment(d_k)
    h = run(cfg)
    reached = steps_to(h, "loss", 0.5)
    out = {"d_k": d_k, "steps": h["step"].tolist()}
    for name, label in (("fixed", FIXED), ("learned", LEARNED)):
        a = arm_index(cfg, label)
        raw = h["max_logit"][:, a] / h["scale"][:, a]
        out[name] = {
            "loss": h["loss"][:, a].mean(1).tolist(),
            "final_loss": h["loss"][-1, a].tolist(),
            "final_accuracy": h["accuracy"][-1, a].mean().item(),
            "steps_to_half": reached[a].tolist(),
            "scale_ratio": (h["scale"][:, a] / h["scale"][0, a]).T.tolist(),  # per seed, over steps
            "raw_ratio": (raw / raw[0]).T.tolist(),
            "final_scale": h["scale"][-1, a].tolist(),
        }
    out["init_scale"] = d_k**-0.5
    return out


result = learned_temperature()

print(
    sdpa.markdown_table(
        ["arm", "scale at the end (per seed)", "× its start", "largest raw score q·k, × its start",
         "steps to loss < 0.5", "loss", "accuracy"],
        [(name, " / ".join(f"{s:.4f}" for s in r["final_scale"]),
          sum(x[-1] for x in r["scale_ratio"]) / 3, sum(x[-1] for x in r["raw_ratio"]) / 3,
          " / ".join(f"{s:.0f}" for s in r["steps_to_half"]), sum(r["final_loss"]) / 3, r["final_accuracy"])
         for name, r in (("fixed 1/√d_k", result["fixed"]), ("learned", result["learned"]))],
        caption=f"d_k = {result['d_k']}; both arms start at c = 1/√{result['d_k']} = {result['init_scale']:.4f}. "
        f"Loss and accuracy after {result['steps'][-1]} steps, mean of three seeds.",
    )
)

figure = sdpa.Figure(
    "temperature-learned-scale",
    caption="Left: training loss with the scale fixed at 1/√d_k and learned from it (mean of three "
    "seeds). Right, per seed: the learned scale relative to its start (solid) and the largest raw score "
    "|q·k| relative to its start (dashed). The scale barely moves; the raw scores grow many times over.",
    alt="Left: two nearly coincident loss curves falling to near zero. Right: three flat solid lines "
    "near 1 and three dashed lines rising to around ten on a log axis.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    left.plot(result["steps"], result["fixed"]["loss"], color=sdpa.PALETTE[2], label="fixed 1/√d_k")
    left.plot(result["steps"], result["learned"]["loss"], "--", color=sdpa.PALETTE[4], label="learned")
    left.set(xlabel="training step", ylabel="loss (nats)")
    left.legend()
    for seed, (scale, raw) in enumerate(zip(result["learned"]["scale_ratio"], result["learned"]["raw_ratio"])):
        right.plot(result["steps"], scale, color=sdpa.PALETTE[seed], label=f"seed {seed}: scale")
        right.plot(result["steps"], raw, "--", color=sdpa.PALETTE[seed], label=f"seed {seed}: |q·k|")
    right.set(yscale="log", xlabel="training step", ylabel="relative to step 0")
    right.legend(fontsize=7, ncols=2)
print(figure.html)
