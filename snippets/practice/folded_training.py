"""Folding 1/sqrt(d_k) into W_Q: identical at initialisation, not in training, unless...

Four arms of the associative-recall head (d_k = 64, so s = 1/sqrt(d_k) = 1/8), trained
with SGD and with Adam from the same initial draw per seed:

* scaled: logits s q·k, the reference;
* folded: W_Q starts as s W_Q, no factor in the logits, every learning rate unchanged;
* folded with W_Q's learning rate rescaled by the rule derived on the page
  (SGD: lr s^2, Adam: lr s);
* folded with the other optimiser's rule, to show that the rule is optimiser-specific.

The training loop is the site's shared one (``sdpa.recall``); the arms differ only in
their logit scale, W_Q's initial multiplier and W_Q's learning-rate multiplier.
"""

import math

import sdpa
from sdpa.recall import Arm, RecallConfig, run

sdpa.seed(0)
D_K = 64
S = 1 / math.sqrt(D_K)
RULE = {"sgd": S**2, "adam": S}
LEARNING_RATE = {"sgd": 0.5, "adam": 1e-2}
ARMS = ["scaled (reference)", "folded, same learning rates", "folded, W_Q rate by the rule",
        "folded, the other optimiser's rule"]


def config(optimizer: str) -> RecallConfig:
    other = RULE["adam" if optimizer == "sgd" else "sgd"]
    arms = (
        Arm(S, label=ARMS[0]),
        Arm(1.0, q_init=S, label=ARMS[1]),
        Arm(1.0, q_init=S, lr_q=RULE[optimizer], label=ARMS[2]),
        Arm(1.0, q_init=S, lr_q=other, label=ARMS[3]),
    )
    return RecallConfig(d_k=D_K, batch=32, steps=100, record_every=5, seeds=(0, 1, 2),
                        optimizer=optimizer, lr=LEARNING_RATE[optimizer], arms=arms)


def compare():
    out = {}
    for optimizer in ("sgd", "adam"):
        h = run(config(optimizer))
        loss = h["loss"]  # (recorded steps, arms, seeds)
        out[optimizer] = {
            "step": h["step"].tolist(),
            "loss_mean": loss.mean(-1).T.tolist(),  # per arm, per recorded step
            "loss_min": loss.amin(-1).T.tolist(),
            "loss_max": loss.amax(-1).T.tolist(),
            "init_gap": (loss[0] - loss[0, :1]).abs().max().item(),
            "max_gap": (loss - loss[:, :1]).abs().amax((0, 2)).tolist(),  # per arm, vs the reference
            "final_loss": loss[-1].mean(-1).tolist(),
            "final_accuracy": h["accuracy"][-1].mean(-1).tolist(),
        }
    return out


result = compare()

print(
    sdpa.markdown_table(
        ["optimiser", "arm", "W_Q rate multiplier", "largest loss gap to the reference", "final loss", "final accuracy"],
        [
            (opt.upper() if opt == "sgd" else "Adam", ARMS[a], config(opt).arms[a].lr_q,
             r["max_gap"][a], r["final_loss"][a], r["final_accuracy"][a])
            for opt, r in result.items()
            for a in range(len(ARMS))
        ],
        align="llrrrr",
        caption="Associative recall, one head, d_k = 64, 100 steps, 3 seeds. The gap is the largest "
        "difference in training loss from the scaled reference at any recorded step and seed. "
        "At step 0 every arm has the reference's loss exactly.",
    )
)

figure = sdpa.Figure(
    "practice-folded-training",
    caption="Training loss of the four arms (mean over 3 seeds; band: lowest to highest seed). "
    "With the rule's learning rate the folded head retraces the scaled one; with unchanged "
    "learning rates, or with the other optimiser's rule, it follows a different path.",
    alt="Two panels, SGD and Adam, of loss against step. In each, the reference and the "
    "rule-rescaled folded arm overlap; the folded arm with unchanged rates and the arm with "
    "the wrong rule separate from them.",
    ncols=2,
    size=(7.4, 3.1),
    sharey=True,
)
with figure as axes:
    for ax, (opt, r) in zip(axes, result.items()):
        for a, (label, style) in enumerate(zip(ARMS, ["-", "--", ":", "-."])):
            color = sdpa.PALETTE[a]
            ax.plot(r["step"], r["loss_mean"][a], style, color=color, label=label, lw=2.4 if a == 0 else 1.6)
            ax.fill_between(r["step"], r["loss_min"][a], r["loss_max"][a], color=color, alpha=0.15, lw=0)
        ax.set(title="SGD" if opt == "sgd" else "Adam", xlabel="step", yscale="log")
    axes[0].set_ylabel("training loss")
    axes[1].legend(fontsize=7)
print(figure.html)
