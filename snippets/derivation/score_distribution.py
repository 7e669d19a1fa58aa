"""What the scores look like: unscaled they widen with d_k, scaled they stay put.

Histograms of q·k for three head dimensions, left without scaling and right after
dividing by sqrt(d_k), with the standard normal density drawn over the scaled ones.
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, scores

HEAD_DIMS = [8, 64, 512]
N_TOKENS = 400


def sample_scores(head_dims=HEAD_DIMS, n=N_TOKENS, seed=1):
    generator = sdpa.seed(seed)
    samples = {}
    for d_k in head_dims:
        q, k = random_qk(n, n, d_k, generator, device=sdpa.device())
        samples[d_k] = scores(q, k).flatten().cpu()
    return samples


result = sample_scores()

figure = sdpa.Figure(
    "score-distribution",
    ncols=2,
    caption="Left: raw scores q·k spread out as the head dimension grows (their standard "
    "deviation is √d_k). Right: the same scores divided by √d_k all follow the standard "
    "normal curve (dashed), whatever d_k.",
    alt="Two histogram panels. Unscaled score distributions for d_k 8, 64 and 512 widen "
    "as d_k grows; after dividing by √d_k all three lie on a standard normal density.",
)
with figure as (raw_ax, scaled_ax):
    for d_k, s in result.items():
        label = f"d_k = {d_k}"
        raw_ax.hist(s.numpy(), bins=120, range=(-80, 80), density=True, histtype="step", lw=1.5, label=label)
        scaled_ax.hist((s / math.sqrt(d_k)).numpy(), bins=80, range=(-4.5, 4.5), density=True,
                       histtype="step", lw=1.5, label=label)
    grid = torch.linspace(-4.5, 4.5, 200)
    scaled_ax.plot(grid, torch.exp(-grid**2 / 2) / math.sqrt(2 * math.pi), "--", color=sdpa.INK,
                   lw=1, label="N(0, 1)")
    raw_ax.set(title="q·k", xlabel="score", ylabel="density", yscale="log", ylim=(1e-4, 0.5))
    scaled_ax.set(title="q·k / √d_k", xlabel="score", ylim=(0, 0.5))
    raw_ax.legend()
    scaled_ax.legend()
print(figure.html)
