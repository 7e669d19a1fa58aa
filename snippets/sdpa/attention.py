"""The attention math of the site, each idea once: scores and their scale, softmax
statistics (entropy, the Jacobian), the soft cap and QK-norm.

The line the whole site is about is :func:`scores`::

    (q @ k.transpose(-2, -1)) * scale

and :class:`Scale` names the three factors the pages compare (none, 1/sqrt(d_k), 1/d_k).
The softmax Jacobian J = diag(p) - p p^T is symmetric and positive semi-definite,
J 1 = 0, trace J = 1 - ||p||^2, and its largest eigenvalue is at most 1/2 (a two-way tie).
"""

from __future__ import annotations

import enum
import math

import torch
import torch.nn.functional as F


class Scale(enum.Enum):
    """A rule for the logit factor as a function of the head dimension d_k."""

    NONE = "none"
    INV_SQRT = "1/sqrt(d_k)"
    INV = "1/d_k"

    def factor(self, d_k: int) -> float:
        """The number the logits are multiplied by."""
        return {Scale.NONE: 1.0, Scale.INV_SQRT: 1.0 / math.sqrt(d_k), Scale.INV: 1.0 / d_k}[self]

    @property
    def label(self) -> str:
        """How tables and legends name it."""
        return {Scale.NONE: "no factor", Scale.INV_SQRT: "1/√d_k", Scale.INV: "1/d_k"}[self]


def scores(q: torch.Tensor, k: torch.Tensor, scale: float | torch.Tensor = 1.0) -> torch.Tensor:
    """The attention logits: ``(q @ k.transpose(-2, -1)) * scale`` (tokens by d_k inputs)."""
    return (q @ k.transpose(-2, -1)) * scale


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """The textbook formula: ``softmax(scale * q k^T) v``."""
    return torch.softmax(scores(q, k, scale), dim=-1) @ v


def random_qk(
    n_queries: int,
    n_keys: int,
    d_k: int,
    generator: torch.Generator,
    *,
    std: float = 1.0,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys with independent N(0, std^2) components: the textbook model.

    Drawn on the CPU from ``generator``, then moved, so CPU and GPU see the same numbers.
    """
    q = torch.randn(n_queries, d_k, generator=generator) * std
    k = torch.randn(n_keys, d_k, generator=generator) * std
    return q.to(device), k.to(device)


def entropy(p: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Shannon entropy in nats of probability rows (0 log 0 taken as 0)."""
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(dim)


def jacobian(p: torch.Tensor) -> torch.Tensor:
    """The softmax Jacobian dp/dz = diag(p) - p p^T of each row: ``(..., n) -> (..., n, n)``."""
    return torch.diag_embed(p) - p[..., :, None] * p[..., None, :]


def jacobian_spectral_norm(p: torch.Tensor) -> torch.Tensor:
    """The largest eigenvalue of each row's Jacobian (J is symmetric: its spectral norm)."""
    return torch.linalg.eigvalsh(jacobian(p.double()))[..., -1].to(p.dtype)


def jacobian_trace(p: torch.Tensor) -> torch.Tensor:
    """The trace of each row's Jacobian, 1 - ||p||^2: its size summed over all directions."""
    return 1 - (p * p).sum(-1)


def softcap(z: torch.Tensor, cap: float) -> torch.Tensor:
    """Soft-capping ``cap * tanh(z / cap)`` (Gemma 2, Grok-1): about ``z`` when small,
    never beyond +-cap."""
    return cap * torch.tanh(z / cap)


def softcap_slope(z: torch.Tensor, cap: float) -> torch.Tensor:
    """The derivative of :func:`softcap`, sech^2(z / cap): it multiplies every gradient."""
    return 1 - torch.tanh(z / cap) ** 2


def qk_norm(x: torch.Tensor, kind: str = "rms", eps: float = 1e-6) -> torch.Tensor:
    """Normalise each q or k vector over its last dimension (no gain).

    ``kind="rms"``: RMSNorm (Qwen3, Gemma 3, OLMo 2); ``"layer"``: LayerNorm. A model
    multiplies the result by a learned gain (``nn.RMSNorm`` does both).
    """
    if kind == "rms":
        return F.rms_norm(x, x.shape[-1:], eps=eps)
    if kind == "layer":
        return F.layer_norm(x, x.shape[-1:], eps=eps)
    raise ValueError(f"kind must be 'rms' or 'layer', not {kind!r}")
