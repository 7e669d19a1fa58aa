"""Why implementations scale q before the matmul: float16's range at large activations.

Queries and keys whose components have a large spread (activation outliers grow during
training) make q·k exceed float16's largest finite number, 65504. We compute the logits
of d_k = 128 heads in float16 on the CPU three ways: unscaled; scaled after the matmul
(the product is formed first, then divided); and scaled before it (q multiplied by
1/sqrt(d_k) first). We count the logits that come out infinite.
"""

import math

import torch

import sdpa

generator = sdpa.seed(0)
D_K, N_QUERIES, N_KEYS = 128, 128, 128
ACTIVATION_STDS = [4, 16, 32, 48, 64, 128]


def measure(generator):
    dev = sdpa.device()
    factor = 1 / math.sqrt(D_K)
    q0 = torch.randn(N_QUERIES, D_K, generator=generator)
    k0 = torch.randn(N_KEYS, D_K, generator=generator)
    rows = []
    for std in ACTIVATION_STDS:
        q, k = (q0 * std).half().to(dev), (k0 * std).half().to(dev)
        after = (q @ k.T) * factor
        before = (q * factor) @ k.T
        rows.append(
            {
                "std": std,
                "logit_std_unscaled": std**2 * math.sqrt(D_K),
                "inf_unscaled": torch.isinf(q @ k.T).float().mean().item(),
                "inf_scaled_after": torch.isinf(after).float().mean().item(),
                "inf_scaled_before": torch.isinf(before).float().mean().item(),
            }
        )
    return rows


result = measure(generator)

print(
    sdpa.markdown_table(
        ["component std of q and k", "expected std of q·k", "infinite, q·k", "infinite, (q·k)/√d_k",
         "infinite, (q/√d_k)·k"],
        [(r["std"], r["logit_std_unscaled"], r["inf_unscaled"], r["inf_scaled_after"],
          r["inf_scaled_before"]) for r in result],
        caption=f"Share of infinite logits, float16 on the CPU, d_k = {D_K}, {N_QUERIES} × "
        f"{N_KEYS} logits. Dividing after the matmul cannot undo an overflow.",
    )
)
