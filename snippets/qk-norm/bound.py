"""The bound QK-norm puts on a logit, checked against weights that grow.

Random queries and keys come from a random projection of unit-variance inputs whose
weights we multiply by a growing factor a, as a high learning rate does to W_Q and W_K.
For each a we measure the largest logit with 1/sqrt(d_k) alone and with RMS QK-norm
(gain 1) followed by 1/sqrt(d_k), and compare with the bound sqrt(d_k) * g_q * g_k.
"""

import math

import torch

import sdpa
from sdpa.attention import qk_norm, scores

generator = sdpa.seed(5)
D_MODEL, D_K, N_TOKENS = 64, 16, 256
FACTORS = [1, 3, 10, 30, 100]


def logit_bound(generator, factors=FACTORS, d_model=D_MODEL, d_k=D_K, n=N_TOKENS):
    dev = sdpa.device()
    x = torch.randn(n, d_model, generator=generator).to(dev)
    w_q, w_k = (torch.randn(d_model, d_k, generator=generator).to(dev) / math.sqrt(d_model)
                for _ in range(2))
    rows = []
    for a in factors:
        q, k = x @ (a * w_q), x @ (a * w_k)
        plain = scores(q, k, 1 / math.sqrt(d_k))
        normed = scores(qk_norm(q), qk_norm(k), 1 / math.sqrt(d_k))  # RMSNorm, gains 1
        rows.append(
            {
                "factor": a,
                "max_plain": plain.abs().max().item(),
                "max_normed": normed.abs().max().item(),
                "std_normed": normed.std().item(),
                "bound": math.sqrt(d_k),
            }
        )
    return rows


result = logit_bound(generator)

print(
    sdpa.markdown_table(
        ["weight factor a", "largest logit size, 1/√d_k", "largest logit size, QK-norm + 1/√d_k",
         "std, QK-norm + 1/√d_k", "bound √d_k"],
        [(r["factor"], r["max_plain"], r["max_normed"], r["std_normed"], r["bound"])
         for r in result],
        caption=f"{N_TOKENS} tokens, d_model = {D_MODEL}, d_k = {D_K}, gains 1. Multiplying both "
        "projections by a multiplies the plain logits by a²; the normalised logits do not move.",
    )
)
