"""Claims that record their decisive statistic: a pytest plugin (``pytest_plugins = ["claims"]``).

A claim test asserts what a page says about a measured quantity. Through the ``claim``
fixture each assertion also records what it compared: a name, the statistic, the threshold
and the side of the threshold the statistic must lie on. The record lands in the test's
``user_properties``, so in the JUnit XML as a ``<property name="claim" value="{json}">``
(written for a failing test too), and ``scripts/claims_sweep.py`` reads it from every seed
offset's run and reports each claim's margin: how many standard deviations (over the offsets)
the statistic's distance to its threshold is from zero, positive when the claim passes.

    def test_scaled_std(run_snippet, claim):
        r = run_snippet("derivation/score_std.py").namespace["result"][0]
        claim.near("scaled std = 1 within 4 SE", r["std_scaled"], 1.0, tol=4 * se)
        claim.above("unscaled head sharper", sharp / soft, 1, log=True)
        claim.paired_above("1/d_k ends lower than 1/sqrt(d_k)", loss_sqrt, loss_d)

Thresholds come from the estimate's spread, fixed before any sweep (docs DESIGN, claim
contract); a claim whose margin is under 3 gets more seeds, a longer run or narrower
words, never a threshold moved towards the sweep's values.

``paired_t`` and ``t_quantile`` are the statistics for two arms run on the same seeds:
"A ends higher than B" is the lower end of the paired t interval of A - B above 0. The
Student t quantile is exact for integer degrees of freedom (the closed-form CDF, inverted
by bisection), so no statistics package is needed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

#: The JUnit property under which every claim is recorded (its value is JSON).
PROPERTY = "claim"
#: The two sides of a threshold a statistic can be required to lie on.
ABOVE, BELOW = "above", "below"


# ------------------------------------------------------------------------- statistics


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


def t_interval(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """The two-sided t interval of the mean of ``values`` (at least two of them)."""
    values = [float(v) for v in values]
    n = len(values)
    if n < 2:
        raise ValueError("a t interval needs at least two values")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + confidence / 2, n - 1) * se
    return Interval(mean, mean - half, mean + half, se, n, confidence)


def paired_t(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Interval:
    """The t interval of the mean of a - b, the two arms run on the same seeds (paired)."""
    if len(a) != len(b):
        raise ValueError(f"paired arms need as many values: {len(a)} and {len(b)}")
    return t_interval([float(x) - float(y) for x, y in zip(a, b)], confidence)


# ---------------------------------------------------------------------------- the fixture


class Claims:
    """Records and asserts one test's claims (the ``claim`` fixture)."""

    def __init__(self, properties: list):
        self._properties = properties
        self.recorded: dict[str, dict] = {}

    def _record(self, name: str, statistic: float, threshold: float, direction: str,
                note: str = "", log: bool = False) -> None:
        if name in self.recorded:
            raise ValueError(f"claim {name!r} recorded twice in one test: give each its own name")
        statistic, threshold = float(statistic), float(threshold)
        if log and not (statistic > 0 and threshold > 0):
            raise ValueError(f"claim {name!r}: a log-scale claim needs a positive statistic and threshold")
        entry = {"name": name, "statistic": statistic, "threshold": threshold, "direction": direction}
        if log:
            entry["log"] = True
        self.recorded[name] = entry
        self._properties.append((PROPERTY, json.dumps(entry, allow_nan=True)))
        holds = statistic > threshold if direction == ABOVE else statistic < threshold
        assert holds, (f"claim {name!r}: {statistic:.6g} is not {direction} {threshold:.6g}"
                       + (f" ({note})" if note else ""))

    def above(self, name: str, statistic: float, threshold: float, *, log: bool = False) -> None:
        """The claim that ``statistic`` > ``threshold``. ``log=True`` for a ratio or a growth
        factor (positive, spread multiplicatively): its margin is read on the log scale."""
        self._record(name, statistic, threshold, ABOVE, log=log)

    def below(self, name: str, statistic: float, threshold: float, *, log: bool = False) -> None:
        """The claim that ``statistic`` < ``threshold`` (``log``: as in :meth:`above`)."""
        self._record(name, statistic, threshold, BELOW, log=log)

    def between(self, name: str, statistic: float, low: float, high: float) -> None:
        """``low`` < ``statistic`` < ``high``: two claims, ``name (low)`` and ``name (high)``,
        so that the report shows which edge is near."""
        self._record(f"{name} (low)", statistic, low, ABOVE)
        self._record(f"{name} (high)", statistic, high, BELOW)

    def near(self, name: str, statistic: float, target: float, *, tol: float | None = None,
             rel: float | None = None) -> None:
        """``statistic`` within ``tol`` (absolute) or ``rel`` (relative to ``target``) of
        ``target``: :meth:`between` its two edges."""
        if (tol is None) == (rel is None):
            raise ValueError("give exactly one of tol and rel")
        width = tol if tol is not None else abs(rel * target)
        self.between(name, statistic, target - width, target + width)

    def paired_above(self, name: str, a: Sequence[float], b: Sequence[float], *,
                     by: float = 0.0, confidence: float = 0.95) -> Interval:
        """"A is higher than B (by more than ``by``)", A and B on the same seeds: the lower
        end of the paired t interval of A - B above ``by``. Returns the interval."""
        interval = paired_t(a, b, confidence)
        self._record(name, interval.low, by, ABOVE,
                     f"mean difference {interval.mean:.4g}, {confidence:.0%} t interval "
                     f"[{interval.low:.4g}, {interval.high:.4g}] on {interval.n} seeds")
        return interval

    def paired_below(self, name: str, a: Sequence[float], b: Sequence[float], *,
                     by: float = 0.0, confidence: float = 0.95) -> Interval:
        """"A is lower than B (by more than ``by``)": the upper end of the paired t interval
        of A - B below ``-by``. Returns the interval."""
        interval = paired_t(a, b, confidence)
        self._record(name, interval.high, -by, BELOW,
                     f"mean difference {interval.mean:.4g}, {confidence:.0%} t interval "
                     f"[{interval.low:.4g}, {interval.high:.4g}] on {interval.n} seeds")
        return interval


@pytest.fixture
def claim(request) -> Claims:
    """Record-and-assert for a claim test's statistics: ``claim.above(name, statistic,
    threshold)``, ``claim.below``, ``claim.between``, ``claim.near``, ``claim.paired_above``,
    ``claim.paired_below`` (see :mod:`claims`)."""
    return Claims(request.node.user_properties)


def recorded(properties) -> list[dict]:
    """The claims among a test's user properties or JUnit ``(name, value)`` pairs."""
    return [json.loads(value) for name, value in properties if name == PROPERTY]


def slack(entry: dict) -> float:
    """How far a recorded statistic lies on the passing side of its threshold (negative:
    on the failing side); for a log-scale claim, the distance between their logarithms."""
    if entry.get("log"):
        distance = math.log(entry["statistic"]) - math.log(entry["threshold"])
    else:
        distance = entry["statistic"] - entry["threshold"]
    return distance if entry["direction"] == ABOVE else -distance
