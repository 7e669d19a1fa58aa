"""Attention as other models vary it, each variation written once: causal masks, sink
logits (gpt-oss), differential attention (the Differential Transformer), rotary position
embeddings (RoFormer) and YaRN's logit multiplier (DeepSeek-V3's multi-head latent
attention).

Each function works on logits or on q and k as :func:`sdpa.attention.scores` makes them,
so the field page can measure every variant at initialisation with the site's row
statistics (:class:`sdpa.survey.Rows`)::

    z = scores(q, k, scale)               # (..., queries, keys)
    p = sink_softmax(causal(z), sink=0.0)  # rows over the visible keys, summing to less than 1
"""

from __future__ import annotations

import math

import torch


def causal(z: torch.Tensor) -> torch.Tensor:
    """Logits of a causal head: query i sees keys 0..i (position i+1 holds i+1 keys);
    the later keys get -inf, so softmax gives them weight 0."""
    n_q, n_k = z.shape[-2:]
    future = torch.ones(n_q, n_k, dtype=torch.bool, device=z.device).triu(1 + n_k - n_q)
    return z.masked_fill(future, -math.inf)


def sink_softmax(z: torch.Tensor, sink: float | torch.Tensor) -> torch.Tensor:
    """Softmax with a sink logit, as gpt-oss computes it: ``sink`` joins every row as one
    more logit, after the scale, and its weight is dropped. The weights left sum to
    ``1 / (1 + exp(sink - logsumexp(z)))``, less than 1; their ratios are softmax's."""
    s = torch.as_tensor(sink, dtype=z.dtype, device=z.device).expand(*z.shape[:-1], 1)
    return torch.softmax(torch.cat([z, s], dim=-1), dim=-1)[..., :-1]


def lambda_init(depth: int) -> float:
    """The Differential Transformer's initial lambda for layer ``depth`` (from 0):
    0.8 - 0.6 exp(-0.3 depth)."""
    return 0.8 - 0.6 * math.exp(-0.3 * depth)


def differential(z1: torch.Tensor, z2: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """Differential attention's map: softmax(z1) - lambda softmax(z2), rows summing to
    1 - lambda. ``z1`` and ``z2`` are two heads' logits, each already scaled."""
    return torch.softmax(z1, dim=-1) - lam * torch.softmax(z2, dim=-1)


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = 10_000.0) -> torch.Tensor:
    """Rotary position embedding (RoFormer; Llama's half-split layout): the pair of
    components (m, m + d/2) of the vector at position i turns by the angle i * base^(-2m/d).
    A rotation: every vector keeps its norm."""
    d = x.shape[-1]
    freqs = base ** (-torch.arange(0, d // 2, dtype=torch.float64) * 2 / d)
    angles = positions.double()[:, None] * freqs[None, :]  # (tokens, d/2)
    cos, sin = angles.cos().to(x), angles.sin().to(x)
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's attention factor for a context ``factor`` times the trained one:
    0.1 * mscale * ln(factor) + 1 (1 when the context is not extended). DeepSeek-V3
    multiplies its softmax scale by its square."""
    return 0.1 * mscale * math.log(factor) + 1.0 if factor > 1 else 1.0
