"""Temperature: softmax(z / T) from argmax (T -> 0) to uniform (T -> infinity).

One row of 16 standard-normal logits is shown at three temperatures; then, for 4,096
such rows, the mean largest weight and the mean entropy against T on a log grid.
"""

import math

import torch

import sdpa
from sdpa.attention import entropy

generator = sdpa.seed(11)
N_KEYS, N_ROWS = 16, 4096
TEMPERATURES = torch.logspace(-2, 2, 41, dtype=torch.float64)  # 0.01 ... 100
EXAMPLE_TS = [0.25, 1.0, 4.0]


def sweep_temperature(generator):
    z = torch.randn(N_ROWS, N_KEYS, generator=generator, dtype=torch.float64).to(sdpa.device())
    max_weight, ent = [], []
    for t in TEMPERATURES.tolist():
        p = torch.softmax(z / t, dim=-1)
        max_weight.append(p.max(-1).values.mean().item())
        ent.append(entropy(p).mean().item())
    example = z[0].cpu()
    order = torch.argsort(example, descending=True)
    return {
        "temperatures": TEMPERATURES.tolist(),
        "max_weight": max_weight,
        "entropy": ent,
        "log_n": math.log(N_KEYS),
        "n": N_KEYS,
        "example": {t: torch.softmax(example[order] / t, -1).tolist() for t in EXAMPLE_TS},
    }


result = sweep_temperature(generator)

figure = sdpa.Figure(
    "temperature-sweep",
    caption=f"Left: one row of {N_KEYS} logits, sorted, at three temperatures. Right: over "
    f"{N_ROWS:,} rows, the mean largest weight and the mean entropy (as a share of its maximum, "
    f"log {N_KEYS}) against T. Small T approaches argmax (largest weight 1, entropy 0); "
    f"large T approaches the uniform row (weight 1/{N_KEYS}, entropy log {N_KEYS}).",
    alt="Left: bar chart of attention weights for T 0.25, 1 and 4, peaked at low T and flat at "
    "high T. Right: largest weight falls from 1 to 1/16 and normalised entropy rises from 0 to 1 "
    "as T goes from 0.01 to 100 on a log axis.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    width = 0.27
    for i, (color, t) in enumerate(zip(sdpa.PALETTE, EXAMPLE_TS)):
        xs = [j + (i - 1) * width for j in range(N_KEYS)]
        left.bar(xs, result["example"][t], width=width, color=color, label=f"T = {t:g}")
    left.set(xlabel="key (sorted by logit)", ylabel="weight", title="one row")
    left.set_xticks(range(0, N_KEYS, 3))
    left.legend()
    right.plot(result["temperatures"], result["max_weight"], color=sdpa.PALETTE[0],
               label="largest weight")
    right.plot(result["temperatures"], [h / result["log_n"] for h in result["entropy"]],
               color=sdpa.PALETTE[1], label=f"entropy / log {N_KEYS}")
    right.axhline(1 / N_KEYS, color=sdpa.INK, lw=0.8, ls=":", label=f"1/{N_KEYS}")
    right.set(xscale="log", xlabel="temperature T", ylabel="mean over rows",
              title=f"{N_ROWS:,} rows")
    right.legend()
print(figure.html)
