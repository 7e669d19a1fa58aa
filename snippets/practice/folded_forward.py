"""Folding 1/sqrt(d_k) into W_Q, and T5's initialisation: the forward pass at init.

Three heads see the same unit-variance inputs x (d_model = 512, d_k = 64):

* scaled: W_Q, W_K ~ N(0, 1/d_model), logits (x W_Q)(x W_K)^T / sqrt(d_k);
* folded: W_Q' = W_Q / sqrt(d_k), no factor in the attention;
* T5: no factor either, W_Q ~ N(0, 1/(d_model d_kv)) and W_K ~ N(0, 1/d_model), the
  initialisation Hugging Face's T5 code calls "Mesh TensorFlow attention initialization
  to avoid scaling before softmax".

The folded head gives the scaled head's logits to float rounding; T5's head has fresh
weights, so only its statistics agree.
"""

import math

import torch

import sdpa
from sdpa.attention import scores

generator = sdpa.seed(0)
D_MODEL, D_K, TOKENS, SEQUENCES = 512, 64, 64, 32


def forward_at_init(generator, d_model=D_MODEL, d_k=D_K):
    dev = sdpa.device()

    def normal(*shape, std):
        return (torch.randn(*shape, generator=generator) * std).to(dev)

    x = normal(SEQUENCES, TOKENS, d_model, std=1.0)
    w_q, w_k = normal(d_model, d_k, std=d_model**-0.5), normal(d_model, d_k, std=d_model**-0.5)
    scaled = scores(x @ w_q, x @ w_k, 1 / math.sqrt(d_k))
    folded = scores(x @ (w_q / math.sqrt(d_k)), x @ w_k)
    # T5: the query projection carries the whole 1/sqrt(d_kv).
    t5_q = normal(d_model, d_k, std=(d_model * d_k) ** -0.5)
    t5_k = normal(d_model, d_k, std=d_model**-0.5)
    t5 = scores(x @ t5_q, x @ t5_k)
    unscaled = scores(x @ w_q, x @ w_k)
    rows = []
    for head, z in [("scaled", scaled), ("folded", folded), ("t5", t5), ("unscaled", unscaled)]:
        p = torch.softmax(z, -1)
        rows.append(
            {
                "head": head,
                "logit_std": z.std().item(),
                "max_weight": p.max(-1).values.mean().item(),
                "max_diff_to_scaled": (z - scaled).abs().max().item(),
                "max_weight_diff_to_scaled": (p - torch.softmax(scaled, -1)).abs().max().item(),
            }
        )
    return rows


result = forward_at_init(generator)
HEADS = {"scaled": "scaled: q·k/√d_k", "folded": "folded: W_Q/√d_k, no factor",
         "t5": "T5 init, no factor", "unscaled": "unscaled: q·k"}

print(
    sdpa.markdown_table(
        ["head", "logit std", "mean largest weight", "largest logit difference to scaled",
         "largest weight difference"],
        [(HEADS[r["head"]], r["logit_std"], r["max_weight"], r["max_diff_to_scaled"],
          r["max_weight_diff_to_scaled"]) for r in result],
        caption=f"One head at initialisation, d_model = {D_MODEL}, d_k = {D_K}, {SEQUENCES} "
        f"sequences of {TOKENS} unit-variance tokens (float32). Folding the factor into W_Q "
        "reproduces the scaled logits to rounding; T5's initialisation gives the same logit "
        "spread with different weights.",
    )
)
