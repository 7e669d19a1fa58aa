"""Folding 1/sqrt(d_k) into W_Q: identical at initialisation, not in training, unless...

Four arms of the associative-recall head (d_k = 64, so s = 1/sqrt(d_k) = 1/8), trained
with Adam and with SGD from the same initial draw per seed:

* scaled: logits s q·k, the reference;
* folded: W_Q starts as s W_Q, no factor in the logits, every learning rate unchanged;
* folded with W_Q's learning rate rescaled by the rule derived on the page
  (Adam: lr s, SGD: lr s^2);
* folded with the other optimiser's rule, to show that the rule is optimiser-specific.

The table's runs train together: the site's training loop (``sdpa.training.train``)
trains them as one ``sdpa.training.Ensemble``, through ``sdpa.recall.run_recall``; the
arms differ only in their logit scale, W_Q's initial multiplier and W_Q's learning-rate
multiplier. Then the identity, bit for bit: the reference and the rule's arm trained alone
by the plain loop (``sdpa.temperature.train_alone``), under Adam with W_Q's epsilon
divided by s too. s is a power of two, which floating point multiplies exactly.
"""

import math

import torch

import sdpa
from sdpa.attention import Scale
from sdpa.recall import Arm, RecallExperiment, run_recall
from sdpa.temperature import train_alone

D_K = 64
S = 1 / math.sqrt(D_K)
RULE = {"adam": S, "sgd": S**2}
LEARNING_RATE = {"adam": 1e-2, "sgd": 0.5}
LABELS = {"reference": "scaled (reference)", "naive": "folded, same learning rates",
          "rule": "folded, W_Q rate by the rule", "other": "folded, the other optimiser's rule"}


def arms(optimizer: str) -> dict[str, Arm]:
    other = RULE["sgd" if optimizer == "adam" else "adam"]
    return {
        "reference": Arm(Scale.INV_SQRT),
        "naive": Arm(Scale.NONE, q_init=S),
        "rule": Arm(Scale.NONE, q_init=S, lr_q=RULE[optimizer]),
        "other": Arm(Scale.NONE, q_init=S, lr_q=other),
    }


def experiment(optimizer: str) -> RecallExperiment:
    return RecallExperiment(d_k=D_K, batch=32, steps=100, record_every=5, seeds=(0, 1, 2),
                            optimizer=optimizer, lrs=(LEARNING_RATE[optimizer],),
                            arms=tuple(arms(optimizer).values()))


def retraces(optimizer: str) -> bool:
    """The rule's arm, trained alone, equals the reference bit for bit: every step's loss
    and every weight (W_Q as the reference's times s), on every seed."""
    e, rule = experiment(optimizer), arms(optimizer)["rule"]
    eps = {"W_Q.weight": 1 / S}  # Adam only: W_Q's gradient is 1/s times the reference's
    for seed in e.seeds:
        reference, losses = train_alone(e, arms(optimizer)["reference"], seed)
        folded, folded_losses = train_alone(e, rule, seed, eps)
        same = [torch.equal(folded.get_parameter(name), reference.get_parameter(name) * (
            S if name == "W_Q.weight" else 1)) for name in ("W_Q.weight", "W_K.weight",
                                                           "W_V.weight", "W_O.weight")]
        if folded_losses != losses or not all(same):
            return False
    return True


def compare():
    out = {}
    for optimizer in ("adam", "sgd"):
        history = run_recall(experiment(optimizer))
        curves = {name: history.arm(arm) for name, arm in arms(optimizer).items()}
        reference = curves["reference"].loss  # (records, seeds)
        out[optimizer] = {
            "step": history.step.tolist(),
            **{name: {
                "lr_q": arm.lr_q,
                "loss_mean": curves[name].loss.mean(-1).tolist(),
                "loss_min": curves[name].loss.amin(-1).tolist(),
                "loss_max": curves[name].loss.amax(-1).tolist(),
                "init_difference": (curves[name].loss[0] - reference[0]).abs().max().item(),
                "max_difference": (curves[name].loss - reference).abs().max().item(),
                "final_loss": curves[name].loss[-1].mean().item(),
                "final_accuracy": curves[name].accuracy[-1].mean().item(),
            } for name, arm in arms(optimizer).items()},
            "retraces": retraces(optimizer),
        }
    return out


result = compare()
first = experiment("adam")

print(
    sdpa.markdown_table(
        ["optimiser", "arm", "W_Q rate multiplier", "largest loss difference from the reference",
         "final loss", "final accuracy"],
        [
            ("Adam" if opt == "adam" else "SGD", LABELS[name], r[name]["lr_q"],
             r[name]["max_difference"], r[name]["final_loss"], r[name]["final_accuracy"])
            for opt, r in result.items()
            for name in LABELS
        ],
        align="llrrrr",
        caption=f"Associative recall, one head, d_k = {D_K}, {first.steps} steps, "
        f"{len(first.seeds)} seeds, trained together. Loss difference: the largest from the "
        "scaled reference at any recorded step and seed (zero at step 0). Under Adam the rule's "
        "arm keeps Adam's default ε here, hence its small difference.",
    )
)
said = {True: "retraces the reference bit for bit", False: "does not retrace the reference"}
print("Trained alone by the plain loop, with Adam's ε for W_Q rescaled too, the rule's arm: "
      + "; ".join(f"{'Adam' if opt == 'adam' else 'SGD'}, {said[r['retraces']]}"
                  for opt, r in result.items())
      + " (every step's loss and every weight, on every seed).\n")

figure = sdpa.Figure(
    "practice-folded-training",
    caption=f"Training loss of the four arms under Adam and SGD (mean over {len(first.seeds)} "
    "seeds; band: lowest to highest seed).",
    alt="Two panels, Adam and SGD, of loss against step. In each, the reference and the "
    "rule-rescaled folded arm overlap; the folded arm with unchanged rates and the arm with "
    "the wrong rule separate from them.",
    ncols=2,
    size=(7.4, 3.1),
    sharey=True,
)
with figure as axes:
    for ax, (opt, r) in zip(axes, result.items()):
        for i, ((name, label), style) in enumerate(zip(LABELS.items(), ["-", "--", ":", "-."])):
            color = sdpa.PALETTE[i]
            ax.plot(r["step"], r[name]["loss_mean"], style, color=color, label=label,
                    lw=2.4 if name == "reference" else 1.6)
            ax.fill_between(r["step"], r[name]["loss_min"], r[name]["loss_max"], color=color,
                            alpha=0.15, lw=0)
        ax.set(title="Adam" if opt == "adam" else "SGD", xlabel="step", yscale="log")
    axes[0].set_ylabel("training loss")
    axes[1].legend(fontsize=7)
print(figure.html)
