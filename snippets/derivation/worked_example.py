"""The worked example: logits [16, 8, 4] before and after dividing by √d_k = 8.

A three-key row computed both ways: the probabilities, the entropy, and the largest entry
of the softmax Jacobian diag(p) − p pᵀ, which bounds how much gradient flows back.
"""

import torch

import sdpa
from sdpa.attention import entropy, jacobian

RAW = [16.0, 8.0, 4.0]
SQRT_D_K = 8.0


def softmax_report(logits):
    z = torch.tensor(logits, dtype=torch.float64)
    p = torch.softmax(z, dim=0)
    return {
        "logits": logits,
        "p": p.tolist(),
        "entropy": entropy(p).item(),
        "jacobian_max": jacobian(p).abs().max().item(),
    }


result = {"unscaled": softmax_report(RAW), "scaled": softmax_report([x / SQRT_D_K for x in RAW])}

print(
    sdpa.markdown_table(
        ["row", "logits", "p₁", "p₂", "p₃", "entropy (nats)", "largest Jacobian entry"],
        [
            (name, ", ".join(f"{x:g}" for x in r["logits"]), *r["p"], r["entropy"],
             r["jacobian_max"])
            for name, r in result.items()
        ],
        align="llrrrrr",
        digits=4,
        caption="Entropy of a uniform row of three keys is ln 3 ≈ 1.10 nats.",
    )
)
