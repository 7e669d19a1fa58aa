"""Does LayerNorm make the factor unnecessary? Measured, unscaled against scaled.

LayerNorm fixes each token's mean and spread across its d_model features. The inputs here
are deliberately off-scale (mean 3, std 5) so that LayerNorm has something to do. We then
project with PyTorch's default ``nn.Linear`` initialisation U(-1/sqrt(d_model), 1/sqrt(d_model))
and also try LayerNorm applied to q and k themselves (no learned gain), and measure the
logit spread and the mean largest softmax weight over rows of 64 keys.
"""

import math

import torch
import torch.nn.functional as F

import sdpa
from sdpa.attention import scores

D_MODEL, TOKENS, SEQUENCES = 512, 64, 16
HEAD_DIMS = [16, 64, 256]
SETTINGS = ["LayerNorm on x", "LayerNorm on x, then on q and k"]


def measure(head_dims=HEAD_DIMS, seed=0):
    generator = sdpa.seed(seed)
    dev = sdpa.device()
    x = (3.0 + 5.0 * torch.randn(SEQUENCES, TOKENS, D_MODEL, generator=generator)).to(dev)
    h = F.layer_norm(x, (D_MODEL,))
    rows = []
    for d_k in head_dims:
        bound = 1 / math.sqrt(D_MODEL)  # nn.Linear's default bound, 1/sqrt(fan_in)
        w_q, w_k = ((torch.rand(D_MODEL, d_k, generator=generator) * 2 - 1) * bound for _ in range(2))
        q, k = h @ w_q.to(dev), h @ w_k.to(dev)
        for setting in SETTINGS:
            if setting.endswith("q and k"):
                q_, k_ = F.layer_norm(q, (d_k,)), F.layer_norm(k, (d_k,))
            else:
                q_, k_ = q, k
            row = {"setting": setting, "d_k": d_k, "q_component_var": q_.var().item()}
            for name, factor in (("unscaled", 1.0), ("scaled", 1 / math.sqrt(d_k))):
                z = scores(q_, k_, factor)
                row[f"std_{name}"] = z.std().item()
                row[f"max_weight_{name}"] = torch.softmax(z, -1).max(-1).values.mean().item()
            rows.append(row)
    return rows


result = measure()

print(
    sdpa.markdown_table(
        ["normalisation", "d_k", "Var(q component)", "logit std, q·k", "largest weight, q·k",
         "logit std, q·k/√d_k", "largest weight, q·k/√d_k"],
        [(r["setting"], r["d_k"], r["q_component_var"], r["std_unscaled"], r["max_weight_unscaled"],
          r["std_scaled"], r["max_weight_scaled"]) for r in result],
        align="lrrrrrr",
        caption=f"Inputs with mean 3 and std 5, LayerNorm over d_model = {D_MODEL}, default "
        f"<code>nn.Linear</code> projections; {SEQUENCES} sequences of {TOKENS} tokens. "
        "LayerNorm pins the size of each vector's components, not the size of the dot product: "
        "the unscaled spread still grows like √d_k.",
    )
)
