"""Per-head attention entropy over training at the high learning rate (Zhai et al. 2023).

The same sweep again. For every head of both layers we plot the mean entropy of its
attention rows (in nats, rows after the first, averaged over the batch), seed 0, at
the highest learning rate: without QK-norm on the left, with it on the right.
"""

import sdpa
from sdpa.gpt import run_gpt
from sdpa.sizes import sizes
from sdpa.qk_norm import QK_NORM_ARMS

QK_NORM_SWEEP = sizes().qk_norm

HIGH_LR = max(QK_NORM_SWEEP.lrs)
SHOWN = ["scaled", "qk_norm"]


def head_entropies(sweep=QK_NORM_SWEEP, lr=HIGH_LR):
    history = run_gpt(sweep)
    out = {}
    for name, config in QK_NORM_ARMS.items():
        h = history.arm(config, lr).entropy  # (steps, layers, heads, seeds)
        out[name] = {
            "per_head": h[..., 0].flatten(1).T.tolist(),  # seed 0: one curve per (layer, head)
            "first_mean": h[0].mean().item(),  # before the first update
            "final_min": h[-1].amin().item(),  # lowest head at the end, over seeds
            "final_mean": h[-1].mean().item(),
        }
    return {"lr": lr, "arms": out}


result = head_entropies()

print(
    sdpa.markdown_table(
        ["arm", "mean head entropy, first step", "mean head entropy, last step",
         "lowest head, last step"],
        [(QK_NORM_ARMS[name].label, r["first_mean"], r["final_mean"], r["final_min"])
         for name, r in result["arms"].items()],
        caption=f"Entropy in nats at learning rate {result['lr']:g}, over every head of both "
        "layers and every seed. A uniform row over n keys has entropy ln n; a strictly one-hot "
        "row has 0.",
    )
)

figure = sdpa.Figure(
    "qk-norm-head-entropy",
    caption=f"Attention entropy of each head during training at learning rate {result['lr']:g} "
    "(seed 0; colours: heads, solid layer 1, dashed layer 2).",
    alt="Two panels of attention entropy against training step, four heads each. Left "
    "(1/sqrt(d_k)): the two first-layer curves fall to zero, the second-layer ones fall less "
    "and stay above zero. Right (QK-norm): most curves stay well above zero.",
    ncols=2,
    size=(7.2, 3.2),
    sharey=True,
)
with figure as axes:
    for ax, name in zip(axes, SHOWN):
        curves = result["arms"][name]["per_head"]
        n_heads = QK_NORM_ARMS[name].n_heads
        for j, curve in enumerate(curves):
            layer, head = divmod(j, n_heads)
            ax.plot(range(1, len(curve) + 1), curve, color=sdpa.PALETTE[head],
                    linestyle="-" if layer == 0 else "--",
                    label=f"layer {layer + 1}, head {head + 1}")
        ax.set(title=QK_NORM_ARMS[name].label, xlabel="training step")
    axes[0].set_ylabel("attention entropy (nats)")
    axes[1].legend(fontsize=7)
print(figure.html)
