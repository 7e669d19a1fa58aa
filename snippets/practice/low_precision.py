"""Unscaled logits in bfloat16 and float16: rounding, and where exp overflows.

Unit-variance queries and keys are rounded to the low-precision type first, so that the
only error left is in the logits themselves. For each type and head dimension we compute
the logits of 256 queries against 64 keys in that type (unscaled q·k, and with q
multiplied by 1/sqrt(d_k) before the matmul) and compare with float64:

* the spacing between representable numbers at the median row maximum (rounding step);
* the largest logit error, and the largest change it causes in a softmax weight
  (softmax itself run in float32, as fused kernels do);
* the share of logits above ln(largest finite number), where a naive exp overflows.
"""

import math

import torch

import sdpa

generator = sdpa.seed(0)
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
HEAD_DIMS = [64, 128, 512]
N_QUERIES, N_KEYS = 256, 64


def spacing(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing between neighbouring representable numbers of ``dtype`` around |x|."""
    return torch.finfo(dtype).eps * torch.exp2(torch.floor(torch.log2(x.abs())))


def measure(generator):
    dev = sdpa.device()
    rows = []
    for dtype_name, dtype in DTYPES.items():
        exp_limit = math.log(torch.finfo(dtype).max)
        for d_k in HEAD_DIMS:
            q = torch.randn(N_QUERIES, d_k, generator=generator).to(dtype)
            k = torch.randn(N_KEYS, d_k, generator=generator).to(dtype)
            for name, factor in (("q·k", 1.0), ("q·k/√d_k", 1 / math.sqrt(d_k))):
                q_in = (q.double() * factor).to(dtype)  # the factor applied to q, before the matmul
                exact = q_in.double() @ k.double().T
                low = (q_in.to(dev) @ k.to(dev).T).cpu()
                weights = torch.softmax(low.float(), -1).double()
                weight_error = (weights - torch.softmax(exact, -1)).abs().max()
                rows.append(
                    {
                        "dtype": dtype_name,
                        "d_k": d_k,
                        "logits": name,
                        "row_max": exact.max(-1).values.median().item(),
                        "spacing_at_max": spacing(exact.max(-1).values.median(), dtype).item(),
                        "logit_error": (low.double() - exact).abs().max().item(),
                        "weight_error": weight_error.item(),
                        "exp_overflow_share": (exact > exp_limit).double().mean().item(),
                        "exp_limit": exp_limit,
                    }
                )
    return rows


result = measure(generator)
FP16_MAX = torch.finfo(torch.float16).max

print(
    sdpa.markdown_table(
        ["type", "d_k", "logits", "median row max", "rounding step there", "largest logit error",
         "largest weight error", "share with exp overflow"],
        [(r["dtype"], r["d_k"], r["logits"], r["row_max"], r["spacing_at_max"], r["logit_error"],
          r["weight_error"], r["exp_overflow_share"]) for r in result],
        align="lrlrrrrr",
        caption=f"{N_QUERIES} queries against {N_KEYS} keys with unit-variance components, logits "
        "computed on the CPU in the low-precision type and compared with float64. A naive exp "
        f"overflows above ln({FP16_MAX:.0f}) ≈ {math.log(FP16_MAX):.2f} in float16 and "
        f"{math.log(torch.finfo(torch.bfloat16).max):.1f} in bfloat16; softmax implementations "
        "subtract the row maximum first, so the last column is what an unguarded exp would hit.",
    )
)
