"""The Adam equivalence: a logit factor c is a change of coordinates for W_Q and W_K.

Three recall runs at d_k = 16, from the same initial draws, each trained alone by the
plain loop: A, the factor 1/d_k; B, the factor 1/sqrt(d_k), with W_Q and W_K, their
initialisation, their learning rate and Adam's epsilon rescaled as the derivation says
(by d_k^(-1/4) = 1/2, epsilon by its inverse); C, the same factor with the initialisation
alone rescaled ("fold the constant into the initialisation"). At d_k = 16 every
rescaling is by a power of two, which floating point does exactly, so A and B can be
compared bit for bit.
"""

import torch

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm
from sdpa.sizes import sizes
from sdpa.temperature import first_gradient, train_alone

STUDY = sizes().temperature


def adam_equivalence(study=STUDY):
    experiment, r = study.identity_experiment(), study.r
    arms = {"a": Arm(Scale.INV), "b": study.reparameterised, "c": study.init_only}
    eps = {"b": {"W_Q.weight": 1 / r, "W_K.weight": 1 / r}}
    runs = {key: [train_alone(experiment, arm, seed, eps.get(key)) for seed in study.seeds]
            for key, arm in arms.items()}
    loss = {key: torch.tensor([losses for _, losses in run]) for key, run in runs.items()}
    weights_b = [(mb.W_Q.weight, ma.W_Q.weight * r, mb.W_K.weight, ma.W_K.weight * r)
                 for (ma, _), (mb, _) in zip(runs["a"], runs["b"])]
    grads = [(first_gradient(experiment, arms["b"], seed),
              first_gradient(experiment, arms["a"], seed)) for seed in study.seeds]
    return {
        "d_k": experiment.d_k,
        "r": r,
        "seeds": len(study.seeds),
        "steps": experiment.steps,
        "loss": {key: v.mean(0).tolist() for key, v in loss.items()},  # mean over seeds
        # bit for bit: every loss of every step and seed, and the trained W_Q and W_K
        "b_equals_a": torch.equal(loss["b"], loss["a"]),
        "b_weights_equal": all(torch.equal(wq, aq) and torch.equal(wk, ak)
                               for wq, aq, wk, ak in weights_b),
        "b_gradient_is_a_over_r": all(torch.equal(gb, ga / r) for gb, ga in grads),
        "step0_diff_c": (loss["c"][:, 0] - loss["a"][:, 0]).abs().max().item(),
        "diff_c": (loss["c"] - loss["a"]).abs().amax(0).tolist(),  # worst seed, per step
        "max_diff_c": (loss["c"] - loss["a"]).abs().max().item(),
        "max_diff_b": (loss["b"] - loss["a"]).abs().max().item(),
    }


result = adam_equivalence()
LABELS = {"a": "A: 1/d_k", "b": "B: 1/√d_k; W_Q, W_K init, lr × d_k^-1/4, ε × d_k^1/4",
          "c": "C: 1/√d_k; W_Q, W_K init × d_k^-1/4 only"}

print(
    sdpa.markdown_table(
        ["run", "compared with A", "largest loss difference, step 0",
         "largest loss difference, any step"],
        [("B: init, rate and ε rescaled", "the same run in other coordinates", 0.0,
          result["max_diff_b"]),
         ("C: init rescaled only", "the same start, other training", result["step0_diff_c"],
          result["max_diff_c"])],
        caption=f"d_k = {result['d_k']}, {result['seeds']} seeds, {result['steps']} steps, "
        "each trained alone by the plain loop. A loss difference is the absolute difference "
        "from run A, scale 1/d_k, for the same seed and step (float32).",
    )
)

figure = sdpa.Figure(
    "temperature-adam-equivalence",
    caption=f"Left: training loss (mean of {result['seeds']} seeds) of A, the factor 1/d_k; "
    "B, 1/√d_k with W_Q's and W_K's start, rate and Adam's ε rescaled (the same curve); C, "
    "the start alone rescaled. Right: C's largest difference from A per step; B's is zero.",
    alt="Left: two identical loss curves and a third that departs from them. Right: on a log "
    "axis, the difference of run C from run A after the first step, large throughout.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    steps = list(range(1, result["steps"] + 1))
    styles = {"a": ("-", sdpa.PALETTE[1], 3.0), "b": ("--", sdpa.INK, 1.2),
              "c": ("-", sdpa.PALETTE[3], 1.5)}
    for key, label in LABELS.items():
        style, color, width = styles[key]
        left.plot(steps, result["loss"][key], style, color=color, lw=width, label=label)
    left.set(xlabel="training step", ylabel="loss (nats)")
    left.legend(fontsize=6.5)
    right.plot(steps[1:], result["diff_c"][1:], color=sdpa.PALETTE[3], label="C − A")
    right.set(yscale="log", xlabel="training step", ylabel="largest |Δ loss| over seeds")
    right.legend()
print(figure.html)
