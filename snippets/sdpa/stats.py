"""The statistics every verdict on the site uses: means over seeds and paired t intervals.

Two arms run on the same seeds are compared seed by seed (paired): the differences'
mean and a Student t interval with n - 1 degrees of freedom. Final losses spread over
orders of magnitude, so loss ratios are read as differences of log losses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


def mean(values) -> float:
    """The mean of a sequence of numbers (or of a tensor's entries)."""
    values = torch.as_tensor(values, dtype=torch.float64)
    return values.mean().item()


def _t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom (Simpson's rule on the
    density, accurate to about 1e-9 for |x| < 50)."""
    if x < 0:
        return 1.0 - _t_cdf(-x, df)
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    n = 2000  # even: Simpson's panels
    h = x / n
    total = 0.0
    for k in range(n + 1):
        weight = 1 if k in (0, n) else (4 if k % 2 else 2)
        total += weight * (1 + (k * h) ** 2 / df) ** (-(df + 1) / 2)
    return 0.5 + c * total * h / 3


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection)."""
    if not 0 < p < 1 or df < 1:
        raise ValueError(f"need 0 < p < 1 and df >= 1, not p={p}, df={df}")
    low, high = -1e3, 1e3
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_cdf(mid, df) < p else (low, mid)
    return (low + high) / 2


@dataclass(frozen=True)
class Interval:
    """A mean over seeds and its t interval."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def t_interval(values: torch.Tensor, confidence: float = 0.95) -> Interval:
    """The mean of ``values`` (one per seed) and its two-sided t interval."""
    values = torch.as_tensor(values, dtype=torch.float64).flatten()
    n = len(values)
    if n < 2:
        raise ValueError("a t interval needs at least two seeds")
    m = values.mean().item()
    half = t_quantile(0.5 + confidence / 2, n - 1) * values.std().item() / math.sqrt(n)
    return Interval(m, m - half, m + half, n)


def paired(a: torch.Tensor, b: torch.Tensor, log: bool = False,
           confidence: float = 0.95) -> Interval:
    """``a`` minus ``b`` seed by seed (``log``: log a - log b, a ratio), with its t interval."""
    a, b = (torch.as_tensor(x, dtype=torch.float64) for x in (a, b))
    if a.shape != b.shape:
        raise ValueError(f"paired arms need the same seeds: {tuple(a.shape)} != {tuple(b.shape)}")
    return t_interval(a.log() - b.log() if log else a - b, confidence)
