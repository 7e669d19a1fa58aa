"""Our attention equals PyTorch's ``scaled_dot_product_attention``, scale included.

The reference is the formula written out: ``softmax(scale * Q K^T) V``. PyTorch's fused
function uses ``scale = 1/sqrt(E)`` by default, E being the query's last dimension, and
takes any other factor through its ``scale=`` keyword. We compare both, for three head
dimensions and three scales, in float64 so that only real differences would show.
"""

import math

import torch
import torch.nn.functional as F

import sdpa
from sdpa.attention import scores

HEAD_DIMS = [16, 64, 128]
BATCH, HEADS, TOKENS = 2, 4, 32


def reference_attention(q, k, v, scale):
    """The textbook formula, one line: softmax of the scaled logits, times the values."""
    return torch.softmax(scores(q, k, scale), dim=-1) @ v


def compare(head_dims=HEAD_DIMS, seed=0):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in head_dims:
        shape = (BATCH, HEADS, TOKENS, d_k)
        q, k, v = (torch.randn(shape, generator=generator, dtype=torch.float64).to(sdpa.device()) for _ in range(3))
        cases = {
            "default (no scale=)": (F.scaled_dot_product_attention(q, k, v), 1 / math.sqrt(d_k)),
            "scale=1/d_k": (F.scaled_dot_product_attention(q, k, v, scale=1 / d_k), 1 / d_k),
            "scale=1.0 (unscaled)": (F.scaled_dot_product_attention(q, k, v, scale=1.0), 1.0),
        }
        for name, (fused, factor) in cases.items():
            ours = reference_attention(q, k, v, factor)
            # The default must NOT match an unscaled reference: the comparison can fail.
            unscaled = reference_attention(q, k, v, 1.0)
            rows.append(
                {
                    "d_k": d_k,
                    "call": name,
                    "factor": factor,
                    "max_abs_diff": (fused - ours).abs().max().item(),
                    "diff_to_unscaled": (fused - unscaled).abs().max().item(),
                }
            )
    return rows


result = compare()

print(
    sdpa.markdown_table(
        ["d_k", "PyTorch call", "factor in our formula", "largest difference", "vs. unscaled formula"],
        [(r["d_k"], f"`{r['call']}`", r["factor"], r["max_abs_diff"], r["diff_to_unscaled"]) for r in result],
        align="rlrrr",
        caption="Largest absolute difference between <code>F.scaled_dot_product_attention</code> and "
        "the written-out formula with the matching factor (float64, 2 × 4 heads × 32 tokens). "
        "The last column compares the same call with the unscaled formula: the default call is "
        "not the unscaled one.",
    )
)
