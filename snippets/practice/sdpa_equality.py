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
from sdpa.attention import attention

generator = sdpa.seed(0)
HEAD_DIMS = [16, 64, 128]
BATCH, HEADS, TOKENS = 2, 4, 32
CALLS = {None: "default (no scale=)", "1/d_k": "scale=1/d_k", "1": "scale=1.0 (unscaled)"}


def compare(generator, head_dims=HEAD_DIMS):
    """One row per d_k and call of F.scaled_dot_product_attention (``scale_arg`` None: default)."""
    rows = []
    for d_k in head_dims:
        shape = (BATCH, HEADS, TOKENS, d_k)
        q, k, v = (torch.randn(shape, generator=generator, dtype=torch.float64).to(sdpa.device())
                   for _ in range(3))
        factors = {None: 1 / math.sqrt(d_k), "1/d_k": 1 / d_k, "1": 1.0}
        for scale_arg, factor in factors.items():
            kwargs = {} if scale_arg is None else {"scale": factor}
            fused = F.scaled_dot_product_attention(q, k, v, **kwargs)
            ours = attention(q, k, v, factor)  # softmax(factor * q k^T) v, written out
            # The default must NOT match an unscaled reference: the comparison can fail.
            unscaled = attention(q, k, v, 1.0)
            rows.append(
                {
                    "d_k": d_k,
                    "scale_arg": scale_arg,
                    "factor": factor,
                    "max_abs_diff": (fused - ours).abs().max().item(),
                    "diff_to_unscaled": (fused - unscaled).abs().max().item(),
                }
            )
    return rows


result = compare(generator)

print(
    sdpa.markdown_table(
        ["d_k", "PyTorch call", "factor in our formula", "largest difference",
         "vs. unscaled formula"],
        [(r["d_k"], f"`{CALLS[r['scale_arg']]}`", r["factor"], r["max_abs_diff"],
          r["diff_to_unscaled"]) for r in result],
        align="rlrrr",
        caption="Largest absolute difference between <code>F.scaled_dot_product_attention</code> "
        "and the written-out formula with the matching factor (float64, 2 × 4 heads × 32 tokens); "
        "last column: against the unscaled formula, a control.",
    )
)
