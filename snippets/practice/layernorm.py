"""Does LayerNorm make the factor unnecessary? Measured, unscaled against scaled.

LayerNorm fixes each token's mean and spread across its d_model features. The inputs here
are deliberately off-scale (mean 3, std 5) so that LayerNorm has something to do. We then
project with ``nn.Linear`` layers in PyTorch's default initialisation,
U(-1/sqrt(d_model), 1/sqrt(d_model)), and also try LayerNorm applied to q and k
themselves (no learned gain), and measure the logit spread and the mean largest softmax
weight over rows of 64 keys.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

import sdpa
from sdpa.attention import qk_norm, scores

generator = sdpa.seed(0)
D_MODEL, TOKENS, SEQUENCES = 512, 64, 16
HEAD_DIMS = [16, 64, 256]


def measure(generator, head_dims=HEAD_DIMS):
    dev = sdpa.device()
    x = (3.0 + 5.0 * torch.randn(SEQUENCES, TOKENS, D_MODEL, generator=generator)).to(dev)
    h = F.layer_norm(x, (D_MODEL,))
    rows = []
    for d_k in head_dims:
        with sdpa.seeded(d_k):  # nn.Linear draws its initial weights from torch's generator
            w_q, w_k = (nn.Linear(D_MODEL, d_k, bias=False).to(dev) for _ in range(2))
        with torch.no_grad():
            q, k = w_q(h), w_k(h)
        for normed in (False, True):  # LayerNorm on q and k too, or not
            q_, k_ = (qk_norm(q, "layer"), qk_norm(k, "layer")) if normed else (q, k)
            row = {"qk_layernorm": normed, "d_k": d_k, "q_component_var": q_.var().item()}
            for name, factor in (("unscaled", 1.0), ("scaled", 1 / math.sqrt(d_k))):
                z = scores(q_, k_, factor)
                row[f"std_{name}"] = z.std().item()
                row[f"max_weight_{name}"] = torch.softmax(z, -1).max(-1).values.mean().item()
            rows.append(row)
    return rows


result = measure(generator)
SETTINGS = {False: "LayerNorm on x", True: "LayerNorm on x, then on q and k"}

print(
    sdpa.markdown_table(
        ["normalisation", "d_k", "Var(q component)", "logit std, q·k", "largest weight, q·k",
         "logit std, q·k/√d_k", "largest weight, q·k/√d_k"],
        [(SETTINGS[r["qk_layernorm"]], r["d_k"], r["q_component_var"], r["std_unscaled"],
          r["max_weight_unscaled"], r["std_scaled"], r["max_weight_scaled"]) for r in result],
        align="lrrrrrr",
        caption=f"Inputs with mean 3 and std 5, LayerNorm over d_model = {D_MODEL}, default "
        f"<code>nn.Linear</code> projections; {SEQUENCES} sequences of {TOKENS} tokens.",
    )
)
