"""One attention row at every head dimension, under each scale rule: the data of the
explorable figure.

For each d_k from 8 to 1024 we draw one query and 16 keys with independent N(0, 1)
components and form the row's logits under the three rules (no factor, 1/√d_k, 1/d_k).
For each we keep the softmax weights, their entropy and the spectral norm of the softmax
Jacobian; over 1,024 such rows we also take the medians, which the table prints. The
page's script draws the sampled row for the d_k and the rule the reader picks.
"""

import math

import torch

import sdpa
from sdpa.attention import Scale, entropy, jacobian_spectral_norm, random_qk, scores

generator = sdpa.seed(11)
HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512, 1024]
N_KEYS, N_ROWS = 16, 1024


def explore(generator, head_dims=HEAD_DIMS, n_keys=N_KEYS, n_rows=N_ROWS):
    found = {rule.value: {"row": [], "entropy": [], "norm": [], "median_entropy": [],
                          "median_norm": []} for rule in Scale}
    for d_k in head_dims:
        q, k = random_qk(n_rows, n_rows * n_keys, d_k, generator)
        raw = scores(q[:, None, :], k.view(n_rows, n_keys, d_k)).squeeze(1)  # query r, its own keys
        for rule in Scale:
            p = torch.softmax(raw * rule.factor(d_k), dim=-1)
            rows = found[rule.value]
            rows["row"].append(p[0].tolist())
            rows["entropy"].append(entropy(p[0]).item())
            rows["norm"].append(jacobian_spectral_norm(p[0]).item())
            rows["median_entropy"].append(entropy(p).median().item())
            rows["median_norm"].append(jacobian_spectral_norm(p).median().item())
    return {"d_k": list(head_dims), "n_keys": n_keys, "n_rows": n_rows,
            "rules": [{"key": rule.value, "label": rule.label.replace("d_k", "dₖ")}
                      for rule in Scale],
            "arms": found}


result = explore(generator)

print(sdpa.figures.explorable(
    "scale-explorer",
    result,
    caption=f"One row of {N_KEYS} keys at the chosen d_k, its weights sorted from the largest. "
    "Unscaled, the row gathers its weight on fewer keys as d_k grows; with 1/√d_k it looks "
    f"alike at every d_k; with 1/d_k it flattens towards uniform (entropy ln {N_KEYS} = "
    f"{math.log(N_KEYS):.2f} nats).",
))

print(sdpa.markdown_table(
    ["d_k", *(f"entropy, {r.label}" for r in Scale), *(f"‖J‖₂, {r.label}" for r in Scale)],
    [(d_k, *(result["arms"][r.value]["median_entropy"][i] for r in Scale),
      *(result["arms"][r.value]["median_norm"][i] for r in Scale))
     for i, d_k in enumerate(HEAD_DIMS)],
    caption=f"Medians over {N_ROWS:,} rows of {N_KEYS} keys. ‖J‖₂: the spectral norm of the "
    "softmax Jacobian.",
))
