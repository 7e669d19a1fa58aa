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

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from sdpa.stats import Interval, paired, t_cdf, t_interval, t_quantile  # noqa: F401  (the statistics)

REPO = Path(__file__).resolve().parents[1]
#: The JUnit property under which every claim is recorded (its value is JSON).
PROPERTY = "claim"
#: The two sides of a threshold a statistic can be required to lie on.
ABOVE, BELOW = "above", "below"


# ------------------------------------------------------------------------- statistics


def paired_t(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Interval:
    """The t interval of the mean of a - b, the two arms run on the same seeds (paired)."""
    return paired(a, b, confidence=confidence)


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


def claim_sources(repo: Path = REPO) -> dict[str, str]:
    """Every file a claim's statistic or threshold depends on, with a digest of its bytes:
    the snippets and the library (``snippets/**/*.py``), this module, and each test file
    that marks a claim. ``scripts/claims_sweep.py --record`` stores them with a sweep, and a
    test fails when the checkout's differ: a margin on record is a margin of this code."""
    files = [*sorted((repo / "snippets").rglob("*.py")), repo / "tests" / "claims.py",
             *(path for path in sorted((repo / "tests").glob("test_*.py")) if "mark.claims" in path.read_text())]
    return {path.relative_to(repo).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in files if "__pycache__" not in path.parts}
