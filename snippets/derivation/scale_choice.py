"""Why √d_k and not d_k or 1: the softmax input under each choice, across d_k.

Three scale factors on the same unit-variance scores. The variance is the first table's
(``survey.spread``, 10^6 scores) times the factor squared: only 1/√d_k keeps it at 1 for
every head dimension. The largest weight in the survey's rows of 64 keys shows what that
variance does to the attention pattern at initialisation.
"""

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [8, 32, 128, 512]
N_KEYS = 64


def measure(d_k, rule):
    scale = survey.factor(rule, d_k)
    return {"d_k": d_k, "scale": rule, "variance": (survey.spread(d_k) * scale) ** 2,
            "max_weight": survey.rows(d_k, scale, N_KEYS).max_weight.mean().item()}


result = [measure(d_k, rule) for d_k in HEAD_DIMS for rule in Scale]
at = {(r["d_k"], r["scale"]): r for r in result}

print(
    sdpa.markdown_table(
        ["d_k", *(f"Var, {rule.label}" for rule in Scale),
         *(f"largest weight, {rule.label}" for rule in Scale)],
        [(d_k, *(at[d_k, rule]["variance"] for rule in Scale),
          *(at[d_k, rule]["max_weight"] for rule in Scale)) for d_k in HEAD_DIMS],
        caption="Variance of the softmax input (the first table's scores) and mean largest "
        f"attention weight in rows of {N_KEYS} keys ({survey.N_ROWS:,} queries); a uniform row "
        f"would give 1/{N_KEYS} = {1 / N_KEYS:.3f}.",
    )
)
