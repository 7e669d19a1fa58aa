"""The site's models as ``torch.nn.Module``s: the one-head recall model and a small GPT.

In both, the line the site is about reads like the formula::

    att = (q @ k.transpose(-2, -1)) * scale

Weights start from ``nn.Linear``'s own initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
(variance 1/(3 fan_in)), unless :func:`init_unit_variance` re-draws them as
N(0, 1/fan_in): on unit-variance inputs every q and k component then has variance 1, the
textbook assumption. Build a model inside ``sdpa.runtime.seeded(seed)`` to fix its draw.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn


class RecallOutput(NamedTuple):
    """What :class:`RecallHead` computes for each sequence."""

    logits: torch.Tensor  # (..., n_values) the class scores
    attention: torch.Tensor  # (..., n_pairs) the query's attention weights
    scores: torch.Tensor  # (..., n_pairs) the softmax input, scale included


class RecallHead(nn.Module):
    """One attention head that reads the value paired with the queried key.

    ``q = W_Q x_query``, ``k_j = W_K x_j``, ``v_j = W_V x_j`` (d_k each);
    ``p = softmax(scale * q . k_j)`` over the pairs; class scores ``W_O sum_j p_j v_j``.
    The scale is stored as its logarithm, so that a learned scale (a "learned
    temperature", ``learn_scale=True``) stays positive.
    """

    def __init__(self, d_model: int, d_k: int, n_values: int, scale: float,
                 learn_scale: bool = False):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_k, bias=False)
        self.W_K = nn.Linear(d_model, d_k, bias=False)
        self.W_V = nn.Linear(d_model, d_k, bias=False)
        self.W_O = nn.Linear(d_k, n_values, bias=False)
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)), requires_grad=learn_scale)

    def forward(self, query: torch.Tensor, pairs: torch.Tensor) -> RecallOutput:
        """``query`` (..., d_model): one query token per sequence; ``pairs`` (..., n, d_model)."""
        return self.attend(self.W_Q(query), pairs)

    def attend(self, q: torch.Tensor, pairs: torch.Tensor) -> RecallOutput:
        """The rest of the forward pass from the query vector ``q`` (..., d_k)."""
        q = q.unsqueeze(-2)  # (..., 1, d_k): one row of attention per sequence
        # k = W_K(pairs) = pairs @ W_K^T, so q @ k^T = q @ W_K @ pairs^T, and likewise
        # p @ v = p @ pairs @ W_V^T. Python multiplies left to right: these products never
        # build the (n x d_k) keys and values, n times less work than projecting every pair.
        att = (q @ self.W_K.weight @ pairs.transpose(-2, -1)) * self.log_scale.exp()
        p = torch.softmax(att, dim=-1)  # (..., 1, n)
        out = self.W_O(p @ pairs @ self.W_V.weight.T)
        return RecallOutput(out.squeeze(-2), p.squeeze(-2), att.squeeze(-2))


def init_unit_variance(model: nn.Module) -> nn.Module:
    """Re-draw every ``nn.Linear`` weight as N(0, 1/fan_in) from torch's global generator."""
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            nn.init.normal_(layer.weight, std=layer.in_features**-0.5)
    return model
