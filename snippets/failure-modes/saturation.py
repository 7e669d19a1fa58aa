"""Saturation at initialisation: how many keys a row of attention really reads.

The survey's rows of 64 keys (``sdpa.survey``: 4,096 queries per head dimension, q and k
with independent components) under four arms: unscaled with unit-variance components
(the textbook model), unscaled with PyTorch's default ``nn.Linear`` initialisation
(components of variance 1/3), divided by sqrt(d_k), and divided by d_k. Per arm and d_k:
the mean largest weight and entropy, the median *effective number of keys* exp(entropy),
the share of one-hot rows (largest weight above 0.99), and the median weight of a key
relative to the uniform 1/64: the weight, and so the logit gradient, that a key picked at
random gets. Before any learning the key a task needs is such a key.
"""

import math

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
TABLE_DIMS = [8, 64, 128, 256, 512]
N_KEYS = 64
#: (label, scale rule, initialisation)
ARMS = [("q·k, unit init", Scale.NONE, "unit"), ("q·k, default init", Scale.NONE, "default"),
        ("q·k/√d_k", Scale.INV_SQRT, "unit"), ("q·k/d_k", Scale.INV, "unit")]


def saturation(d_k, rule, init):
    rows = survey.rows(d_k, survey.factor(rule, d_k, init), N_KEYS)
    return {"d_k": d_k, "rule": rule, "init": init,
            "max_weight": rows.max_weight.mean().item(), "entropy": rows.entropy.mean().item(),
            "effective_keys": rows.effective_keys.median().item(), "one_hot": rows.one_hot(),
            "key_weight": rows.key_weight.median().item()}


result = [saturation(d_k, rule, init) for d_k in HEAD_DIMS for _, rule, init in ARMS]


def pick(d_k, rule, init):
    return next(r for r in result if (r["d_k"], r["rule"], r["init"]) == (d_k, rule, init))


print(
    sdpa.markdown_table(
        ["d_k", "logits", "largest weight", "entropy", "keys in play, e^H", "one-hot rows",
         "typical key's weight × n"],
        [(d_k, label, r["max_weight"], r["entropy"], r["effective_keys"], f"{r['one_hot']:.1%}",
          r["key_weight"])
         for d_k in TABLE_DIMS for label, *arm in ARMS for r in [pick(d_k, *arm)]],
        caption=f"Rows of {N_KEYS} keys, {survey.N_ROWS:,} queries per head dimension; means over "
        f"rows, entropy in nats (uniform: {math.log(N_KEYS):.2f}), keys in play the median. Last "
        f"column: the median over all keys of {N_KEYS} times the key's weight (uniform: 1).",
    )
)

figure = sdpa.Figure(
    "failure-modes-saturation",
    caption="Left: the median keys in play against d_k (dotted: a uniform row, "
    f"{N_KEYS} keys). Right: the share of one-hot rows (largest weight above {survey.ONE_HOT}).",
    alt="Two panels against head dimension. Keys in play: the unscaled curves fall towards one "
    "key, the default-init curve more slowly, the scaled curve is flat near 40, the 1/d_k curve "
    "rises to 64. One-hot share: rises for the unscaled arms, zero for the scaled arms.",
    ncols=2,
    size=(7.4, 3.0),
)
with figure as (left, right):
    styles = ["o-", "D-", "s--", "^:"]
    for (label, *arm), style, color in zip(ARMS, styles, sdpa.PALETTE[3:] + sdpa.PALETTE):
        mine = [pick(d_k, *arm) for d_k in HEAD_DIMS]
        left.plot(HEAD_DIMS, [r["effective_keys"] for r in mine], style, color=color, label=label)
        right.plot(HEAD_DIMS, [100 * r["one_hot"] for r in mine], style, color=color, label=label)
    left.axhline(N_KEYS, color=sdpa.INK, ls=":", lw=1, label=f"uniform, {N_KEYS}")
    left.set(xscale="log", yscale="log", xlabel="head dimension d_k",
             ylabel="keys in play, median e^H")
    right.set(xscale="log", xlabel="head dimension d_k",
              ylabel=f"rows with max weight > {survey.ONE_HOT} (%)")
    for ax in (left, right):
        ax.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
        ax.minorticks_off()
    left.legend(fontsize=7)
print(figure.html)
