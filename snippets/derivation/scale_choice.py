"""Why √d_k and not d_k or 1: the softmax input under each choice, across d_k.

The same unit-variance queries and keys, three scale factors. Only 1/√d_k keeps the
variance of the softmax input at 1 for every head dimension; the largest weight in a
row of 64 keys shows what that variance does to the attention pattern at initialisation.
"""

import sdpa
from sdpa.attention import SCALINGS, random_qk, row_stats, scores

HEAD_DIMS = [8, 32, 128, 512]
N_QUERIES, N_KEYS = 256, 64


def measure_scale_choice(head_dims=HEAD_DIMS, seed=5):
    generator = sdpa.seed(seed)
    rows = []
    for d_k in head_dims:
        q, k = random_qk(N_QUERIES, N_KEYS, d_k, generator, device=sdpa.device())
        for name, factor in SCALINGS.items():
            z = scores(q, k, factor(d_k))
            rows.append(
                {
                    "d_k": d_k,
                    "scaling": name,
                    "variance": z.var().item(),
                    "max_weight": row_stats(z)["max_weight"].mean().item(),
                }
            )
    return rows


result = measure_scale_choice()

print(
    sdpa.markdown_table(
        ["d_k", *(f"Var, {name}" for name in SCALINGS), *(f"largest weight, {name}" for name in SCALINGS)],
        [
            (d_k,
             *(r["variance"] for name in SCALINGS for r in result if r["d_k"] == d_k and r["scaling"] == name),
             *(r["max_weight"] for name in SCALINGS for r in result if r["d_k"] == d_k and r["scaling"] == name))
            for d_k in HEAD_DIMS
        ],
        caption=f"Variance of the softmax input and mean largest attention weight in rows of "
        f"{N_KEYS} keys ({N_QUERIES} queries); a uniform row would give 1/{N_KEYS} = {1 / N_KEYS:.3f}.",
    )
)
