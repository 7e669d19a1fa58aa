"""The spread of QK^T grows like sqrt(d_k); dividing by sqrt(d_k) brings it back to 1.

Queries and keys have independent standard-normal components, the textbook model of a
freshly initialised head. For each head dimension ``survey.spread`` forms the
1,000 x 1,000 scores of 1,000 queries and 1,000 keys and measures their standard
deviation; the scaled spread is that divided by sqrt(d_k). The interview page and the lab
quote the same measurement.
"""

import math

import sdpa
from sdpa import survey

HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]

result = [
    {"d_k": d_k, "sqrt_d_k": math.sqrt(d_k), "std_unscaled": survey.spread(d_k),
     "std_scaled": survey.spread(d_k) / math.sqrt(d_k)}
    for d_k in HEAD_DIMS
]

print(
    sdpa.markdown_table(
        ["d_k", "√d_k", "std of q·k", "std of q·k / √d_k"],
        [(r["d_k"], r["sqrt_d_k"], r["std_unscaled"], r["std_scaled"]) for r in result],
        caption=f"{survey.SPREAD_TOKENS:,} queries × {survey.SPREAD_TOKENS:,} keys per head "
        "dimension, components drawn from N(0, 1).",
    )
)
