"""The tuned comparison in a realistic shape: several heads, a residual stream, LayerNorm.

The same recall task, but read by one pre-LayerNorm transformer block
(``sdpa.models.RecallBlock``): 4 heads of d_k = 16, d_model = 4 x 16 = 64, so q and k
have full rank; the heads' outputs are projected back and added to the query token, and
a final LayerNorm feeds the readout. Each rule is tuned as on the one-head runs (a window
of rates on the sweep seeds, the best rerun on fresh seeds, ``sizes().block``), with Adam. The
one-head runs at d_k = 16 are drawn beside it.
"""

import math

import sdpa
from sdpa.plots import draw_tuning
from sdpa.sizes import sizes
from sdpa.studies import run_tuning

ONE_HEAD = sizes().tuning
BLOCK_TUNING = sizes().block
CEILING = 10.0

block = run_tuning(BLOCK_TUNING)
one_head = run_tuning(ONE_HEAD)
(d_k,), (optimizer,) = BLOCK_TUNING.d_ks, BLOCK_TUNING.optimizers
heads = BLOCK_TUNING.heads
result = {"block": [block[(optimizer, d_k, rule)] for rule in BLOCK_TUNING.rules],
          "one_head": [one_head[(optimizer, d_k, rule)] for rule in ONE_HEAD.rules]}
n_values = BLOCK_TUNING.sweep(optimizer, d_k, BLOCK_TUNING.rules[0]).n_values


def spread(losses):
    low, high = losses.min().item(), losses.max().item()
    return f"{losses.mean().item():.3f} ± {losses.std().item():.3f} ({low:.2g}–{high:.2g})"


print(
    sdpa.markdown_table(
        ["scaling", "block: best rate", "block: tuned loss, mean ± std (min–max)",
         "block: loss at the fixed rate 0.01", "one head: best rate", "one head: tuned loss"],
        [(b.rule.label, f"{b.best_lr:.3g}", spread(b.confirm_loss),
          f"{b.fixed_loss.mean().item():.3f}",
          f"{o.best_lr:.3g}", spread(o.confirm_loss))
         for b, o in zip(result["block"], result["one_head"])],
        align="llllll",
        caption=f"Adam, d_k = {d_k}. Block: {heads} heads, d_model = {heads * d_k}, residual "
        f"stream and LayerNorm; one head: d_model = {ONE_HEAD.ablation.d_model}. Tuned loss on "
        f"{len(BLOCK_TUNING.confirm_seeds)} fresh seeds at the best of "
        f"{BLOCK_TUNING.points} rates ({len(BLOCK_TUNING.sweep_seeds)} sweep seeds); the "
        "fixed-rate column: the block's sweep at the ablation's rate, mean of its seeds.",
    )
)

figure = sdpa.Figure(
    "tuning-block",
    caption=f"Final loss against learning rate with Adam at d_k = {d_k}: one head (left, as in "
    f"the sweep figure) and one block of {heads} heads with a residual stream and LayerNorm "
    f"(right). Lines, bands and markers as in the sweep figure; open markers at 0.01: the "
    f"fixed rate. Dotted: chance, ln {n_values}.",
    alt="Two panels of loss against learning rate. In both the unscaled rule's curve lies "
    "above the two scaled rules'; in the block it stays far higher, close to chance.",
    ncols=2,
    size=(7.8, 3.6),
    sharey=True,
)
with figure as (left, right):
    draw_tuning(left, result["one_head"], CEILING, math.log(n_values))
    draw_tuning(right, result["block"], CEILING, math.log(n_values))
    left.set(title=f"one head, d_k = {d_k}", xlabel="learning rate", ylabel="final loss (nats)")
    right.set(title=f"{heads} heads × {d_k}, residual, LayerNorm", xlabel="learning rate")
    handles, labels = right.get_legend_handles_labels()
    right.figure.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=7.5)
print(figure.html)
