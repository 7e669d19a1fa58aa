"""Scores, softmax statistics and the random queries and keys the derivation assumes."""

from __future__ import annotations

import math

import torch


def random_qk(
    n_queries: int,
    n_keys: int,
    d_k: int,
    generator: torch.Generator,
    *,
    std: float = 1.0,
    mean: float = 0.0,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys with independent N(mean, std^2) components.

    Sampled on the CPU from ``generator`` and then moved, so CPU and GPU see the same
    numbers.
    """
    q = torch.randn(n_queries, d_k, generator=generator) * std + mean
    k = torch.randn(n_keys, d_k, generator=generator) * std + mean
    return q.to(device), k.to(device)


def scores(q: torch.Tensor, k: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """The attention logits ``scale * q @ k^T`` (the last two dims are tokens by d_k)."""
    return (q @ k.transpose(-2, -1)) * scale


def inverse_sqrt(d_k: int) -> float:
    """The Transformer's scale, 1/sqrt(d_k)."""
    return 1.0 / math.sqrt(d_k)


#: The three scalings the site compares, by name: factor as a function of d_k.
SCALINGS = {
    "none": lambda d_k: 1.0,
    "1/sqrt(d_k)": inverse_sqrt,
    "1/d_k": lambda d_k: 1.0 / d_k,
}


def entropy(p: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Shannon entropy in nats of probability rows (0 log 0 taken as 0)."""
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(dim)


def row_stats(logits: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-row softmax statistics: largest weight, entropy, and the logit gap."""
    p = torch.softmax(logits, dim=-1)
    return {
        "max_weight": p.max(-1).values,
        "entropy": entropy(p),
        "gap": logits.max(-1).values - logits.min(-1).values,
    }
