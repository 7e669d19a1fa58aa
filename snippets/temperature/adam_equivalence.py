"""The Adam equivalence: a logit scale c is a reparameterisation of W_Q and W_K.

Three recall runs at d_k = 128, three seeds each, from the same initial draws:
(a) scale 1/d_k; (b) scale 1/sqrt(d_k), with W_Q and W_K, their initialisation and
their learning rate multiplied by d_k^(-1/4); (c) the same, but only the initialisation
multiplied ("fold the constant into the initialisation"). (a) and (b) are the same run
under Adam; (c) starts with the same forward pass and then trains differently.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm, run_recall
from sdpa.sizes import sizes

STUDY = sizes().temperature


def adam_equivalence(d_k=STUDY.main_d_k):
    history = run_recall(STUDY.experiment(d_k))
    arms = {"a": Arm(Scale.INV), "b": STUDY.reparameterised(d_k), "c": STUDY.init_only(d_k)}
    curves = {key: history.arm(arm) for key, arm in arms.items()}
    loss = {key: c.loss for key, c in curves.items()}  # (records, seeds)
    logit = {key: c.max_logit for key, c in curves.items()}
    return {
        "d_k": d_k,
        "seeds": len(STUDY.seeds),
        "steps": history.step.tolist(),
        "loss": {key: v.mean(1).tolist() for key, v in loss.items()},
        "max_diff_b": (loss["b"] - loss["a"]).abs().max().item(),
        "max_diff_c": (loss["c"] - loss["a"]).abs().max().item(),
        "diff_b": (loss["b"] - loss["a"]).abs().amax(1).tolist(),  # worst seed, per step
        "diff_c": (loss["c"] - loss["a"]).abs().amax(1).tolist(),
        "step0_diff_b": (loss["b"][0] - loss["a"][0]).abs().max().item(),
        "step0_diff_c": (loss["c"][0] - loss["a"][0]).abs().max().item(),
        "max_logit_rel_b": ((logit["b"] - logit["a"]).abs() / logit["a"]).max().item(),
        "grad_q_ratio_b": (curves["b"].grad_q[0] / curves["a"].grad_q[0]).mean().item(),
    }


result = adam_equivalence()
LABELS = {"a": "1/d_k", "b": "1/√d_k, W_Q, W_K init and lr × d_k^-1/4",
          "c": "1/√d_k, W_Q, W_K init × d_k^-1/4 only"}

print(
    sdpa.markdown_table(
        ["run", "compared with (a)", "largest loss difference, step 0",
         "largest loss difference, any step"],
        [("(b) init and lr × d_k^-1/4", "same run in other coordinates", result["step0_diff_b"],
          result["max_diff_b"]),
         ("(c) init × d_k^-1/4 only", "same start, other training", result["step0_diff_c"],
          result["max_diff_c"])],
        caption=f"d_k = {result['d_k']}, {result['seeds']} seeds, {result['steps'][-1]} steps, "
        f"recorded every {STUDY.record_every}; a loss difference is "
        "the absolute difference from run (a), scale 1/d_k, for the same seed and step "
        "(float32).",
    )
)

figure = sdpa.Figure(
    "temperature-adam-equivalence",
    caption=f"Left: training loss (mean of {result['seeds']} seeds) of (a) scale 1/d_k, (b) scale "
    "1/√d_k with W_Q and W_K, their initialisation and learning rate × d_k^-1/4, and (c) the "
    "initialisation alone rescaled. (a) and (b) lie on top of each other. Right: the largest "
    "difference from (a) over the seeds, per step.",
    alt="Left: two identical loss curves and a third that falls faster at first and then is "
    "noisier. Right: on a log axis, the difference of (b) from (a) stays many orders of "
    "magnitude below that of (c).",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    styles = {"a": ("-", sdpa.PALETTE[1], 3.0), "b": ("--", sdpa.INK, 1.2),
              "c": ("-", sdpa.PALETTE[3], 1.5)}
    for key, label in LABELS.items():
        style, color, width = styles[key]
        left.plot(result["steps"], result["loss"][key], style, color=color, lw=width,
                  label=f"({key}) {label}")
    left.set(xlabel="training step", ylabel="loss (nats)")
    left.legend(fontsize=6.5)
    floor = 1e-9  # exact zeros (step 0 of (c)) drawn at the bottom of the log axis
    right.plot(result["steps"], [max(d, floor) for d in result["diff_b"]], color=sdpa.INK,
               label="(b) − (a)")
    right.plot(result["steps"], [max(d, floor) for d in result["diff_c"]],
               color=sdpa.PALETTE[3], label="(c) − (a)")
    right.set(yscale="log", xlabel="training step", ylabel="largest |Δ loss| over seeds")
    right.legend()
print(figure.html)
