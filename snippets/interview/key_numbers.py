"""The numbers to quote in an interview, measured rather than remembered.

Unit-variance queries and keys (400 queries against 64 keys per head width): the spread of
q·k, the best-minus-worst gap in a row and the weight ratio e^gap it implies, and the
largest softmax weight, unscaled and scaled. Then the source material's worked example,
the logits [16, 8, 4] and the same divided by sqrt(d_k) = 8.
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, row_stats, scores

HEAD_DIMS = [8, 64, 128]
N_QUERIES, N_KEYS = 400, 64
EXAMPLE = [16.0, 8.0, 4.0]


def numbers(seed=0):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in HEAD_DIMS:
        q, k = random_qk(N_QUERIES, N_KEYS, d_k, generator, device=sdpa.device())
        z = scores(q, k)
        raw, scaled = row_stats(z), row_stats(z / math.sqrt(d_k))
        gap = raw["gap"].median().item()
        rows.append({"d_k": d_k, "std": z.std().item(), "sqrt_d_k": math.sqrt(d_k), "median_gap": gap,
                     "weight_ratio": math.exp(gap), "max_weight": raw["max_weight"].mean().item(),
                     "max_weight_scaled": scaled["max_weight"].mean().item()})
    example = {
        "unscaled": torch.softmax(torch.tensor(EXAMPLE, dtype=torch.float64), 0).tolist(),
        "scaled": torch.softmax(torch.tensor(EXAMPLE, dtype=torch.float64) / 8, 0).tolist(),
    }
    return {"rows": rows, "example": example}


result = numbers()

print(
    sdpa.markdown_table(
        ["d_k", "std of q·k", "√d_k", "median gap in a row", "e^gap", "largest weight, q·k", "largest weight, q·k/√d_k"],
        [(r["d_k"], r["std"], r["sqrt_d_k"], r["median_gap"], r["weight_ratio"], r["max_weight"], r["max_weight_scaled"])
         for r in result["rows"]],
        caption=f"{N_QUERIES} unit-variance queries against {N_KEYS} keys per head width. The gap is the "
        "largest minus the smallest logit of a row; e^gap is how many times more weight the best key "
        "gets than the worst.",
    )
)
print(
    sdpa.markdown_table(
        ["logits", "softmax weights"],
        [("[16, 8, 4]", ", ".join(f"{p:.4f}" for p in result["example"]["unscaled"])),
         ("[16, 8, 4] / 8 = [2, 1, 0.5]", ", ".join(f"{p:.4f}" for p in result["example"]["scaled"]))],
        align="ll",
        caption="The source material's worked example, computed.",
    )
)
