"""Helpers shared by the temperature page: a planted matching key, and soft-capping.

``planted_scores`` builds rows in which one key (column 0) leans towards its query,
``k = rho q + sqrt(1 - rho^2) e``, and the other keys are unrelated: the simplest model
of a head that has something to find. ``softcap`` is the tanh logit cap of Gemma 2 and
Grok-1.
"""

from __future__ import annotations

import math

import torch


def planted_scores(n_queries: int, n_keys: int, d_k: int, rho: float, generator: torch.Generator) -> torch.Tensor:
    """Unscaled scores q.k of shape (n_queries, n_keys); column 0 is the matching key.

    Query and key components are standard normal; the matching key is
    ``k = rho q + sqrt(1 - rho^2) e`` with ``e`` independent noise, so its score has mean
    ``rho d_k``, while every other score has mean 0 and variance ``d_k``. The keys are not
    drawn one by one: given ``q``, the score ``q . e`` of an independent standard-normal
    vector is exactly N(0, |q|^2), so drawing it directly gives the same distribution for a
    fraction of the cost (rows of 16,384 keys stay cheap). Sampled on the CPU generator.
    """
    q = torch.randn(n_queries, d_k, generator=generator)
    norm = q.norm(dim=-1, keepdim=True)
    z = norm * torch.randn(n_queries, n_keys, generator=generator)
    z[:, 0] = rho * norm[:, 0] ** 2 + math.sqrt(1.0 - rho**2) * z[:, 0]
    return z


def softcap(z: torch.Tensor, cap: float) -> torch.Tensor:
    """Soft-capping ``cap * tanh(z / cap)``: about ``z`` for small logits, never beyond +-cap."""
    return cap * torch.tanh(z / cap)
