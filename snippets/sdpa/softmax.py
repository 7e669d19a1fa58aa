"""The softmax Jacobian and the two numbers that summarise it: spectral norm and trace.

For p = softmax(z), dp_i/dz_j = p_i (delta_ij - p_j), i.e. J = diag(p) - p p^T. It is
symmetric and positive semi-definite, J 1 = 0, trace J = 1 - ||p||^2, and its largest
eigenvalue is at most 1/2 (reached by a two-way tie)::

    p = torch.softmax(torch.randn(5, 64), -1)
    jacobian_stats(p)["spectral_norm"]   # (5,), each in [0, 1/2]
"""

from __future__ import annotations

import torch


def jacobian(p: torch.Tensor) -> torch.Tensor:
    """J = diag(p) - p p^T for each row of ``p`` (shape ``(..., n)`` -> ``(..., n, n)``)."""
    return torch.diag_embed(p) - p[..., :, None] * p[..., None, :]


def jacobian_stats(p: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per row: the spectral norm (largest eigenvalue) and the trace of the Jacobian."""
    eigenvalues = torch.linalg.eigvalsh(jacobian(p.double()))  # symmetric: real, ascending
    return {"spectral_norm": eigenvalues[..., -1].to(p.dtype), "trace": (1 - (p * p).sum(-1))}
