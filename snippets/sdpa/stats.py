"""The statistics every verdict on the site uses: means over seeds and paired t intervals.

Two arms run on the same seeds are compared seed by seed (paired): the differences'
mean and a Student t interval with n - 1 degrees of freedom. Final losses spread over
orders of magnitude, so loss ratios are read as differences of log losses. The Student t
quantile is exact for integer degrees of freedom (the closed-form CDF, inverted by
bisection), so no statistics package is needed; the claim tests use the same functions
(``tests/claims.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


def mean(values) -> float:
    """The mean of a sequence of numbers (or of a tensor's entries)."""
    return torch.as_tensor(values, dtype=torch.float64).mean().item()


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` (a positive integer) degrees of freedom: the
    closed form in theta = atan(t / sqrt(df)) (Abramowitz and Stegun 26.7.3-4)."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a positive integer, not {df!r}")
    theta = math.atan(abs(t) / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # odd: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + 2.4/3.5 cos^4 + ...))
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        inside = 2 / math.pi * (theta + s * math.cos(theta) * total)
    else:  # even: sin (1 + 1/2 cos^2 + 1.3/2.4 cos^4 + ...)
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        inside = s * total
    return 0.5 + math.copysign(inside, t) / 2


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on the
    exact CDF, to about 1e-12)."""
    if not 0 < p < 1:
        raise ValueError(f"p must lie in (0, 1), not {p!r}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class Interval:
    """A mean with its two-sided t interval (``confidence``) over ``n`` values."""

    mean: float
    low: float
    high: float
    se: float
    n: int
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"

    def ratio(self) -> str:
        """An interval of log ratios (``paired(..., log=True)``) written as the ratio:
        ``×2.50 [1.20, 5.10]``."""
        return f"×{math.exp(self.mean):.2f} [{math.exp(self.low):.2f}, {math.exp(self.high):.2f}]"

    def compared(self) -> str:
        """What an interval of log ratios of A over B says of A, in words the interval
        decides, with the ratio: ``ends higher (×2.50 [1.20, 5.10])``, ``ends lower (…)``
        or ``is not told apart (…)``."""
        words = ("ends higher" if self.low > 0 else "ends lower" if self.high < 0
                 else "is not told apart")
        return f"{words} ({self.ratio()})"


def chance_note(n: int, confidence: float = 0.95) -> str:
    """What ``n`` uncorrected intervals at ``confidence`` let chance say: were every compared
    difference zero, about ``n * (1 - confidence)`` of the intervals would still exclude it
    (a word "ends higher" or "ends lower" that the data do not carry). For a caption."""
    words = "interval" if n == 1 else "intervals"
    return (f"{n} uncorrected {confidence:.0%} {words}: if nothing differed, about "
            f"{n * (1 - confidence):.2g} of them would still exclude no difference, by chance")


def t_interval(values, confidence: float = 0.95) -> Interval:
    """The two-sided t interval of the mean of ``values`` (at least two of them)."""
    values = torch.as_tensor(values, dtype=torch.float64).flatten()
    n = len(values)
    if n < 2:
        raise ValueError("a t interval needs at least two values")
    m, se = values.mean().item(), values.std().item() / math.sqrt(n)
    half = t_quantile(0.5 + confidence / 2, n - 1) * se
    return Interval(m, m - half, m + half, se, n, confidence)


def paired(a, b, log: bool = False, confidence: float = 0.95) -> Interval:
    """``a`` minus ``b`` seed by seed (``log``: log a - log b, a ratio), with its t interval."""
    a, b = (torch.as_tensor(x, dtype=torch.float64).flatten() for x in (a, b))
    if a.shape != b.shape:
        raise ValueError(f"paired arms need as many values: {len(a)} and {len(b)}")
    return t_interval(a.log() - b.log() if log else a - b, confidence)
