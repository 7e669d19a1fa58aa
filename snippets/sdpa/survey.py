"""Attention at initialisation, measured once: the numbers several pages quote.

Queries and keys have independent unit-variance components (the textbook model). A
*survey* keeps the unscaled logits q·k of ``n_rows`` queries (``N_ROWS`` unless a study
asks for more) against rows of ``n_keys`` keys, in ``KEY_SETS`` independent key sets (fresh
keys every ``n_rows // KEY_SETS`` queries). Every scale rule and every
initialisation is then a factor on those same logits: ``1/sqrt(d_k)`` or ``1/d_k`` for
the rule, and ``1/3`` for PyTorch's default ``nn.Linear`` initialisation, whose q and k
components have variance 1/3 each (see the derivation page). So the arms of a comparison
see the same draw, and a number quoted on two pages is one measurement::

    rows = survey.rows(128, survey.factor(Scale.NONE, 128))  # unscaled, unit-variance q, k
    rows.one_hot()                     # share of rows whose largest weight is above 0.99
    rows.effective_keys.median()       # exp(entropy): how many keys a row really reads
    survey.rows(128, 1.0, n_rows=4096)  # four times the rows: half the standard error

Everything is memoised per process by :func:`sdpa.runtime.memo`, so the build and the test
session each draw once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import torch

from sdpa import runtime
from sdpa.attention import Scale, entropy, jacobian_spectral_norm, jacobian_trace

#: the rows of a survey, unless a study asks for others: 4,096 (with 1,024, the one-hot
#: shares' steps from one d_k to the next had margins of 2.6-2.9 standard deviations over ten
#: independent seed blocks)
N_ROWS = 4096
KEY_SETS = 128  # independent key sets (fresh keys every 32 queries); rows are a multiple of them
#: The logit factor of each initialisation: sigma_q * sigma_k of the q and k components.
INITS = {"unit": 1.0, "default": 1.0 / 3.0}
#: The threshold above which a row's largest weight counts as one-hot.
ONE_HOT = 0.99
SPREAD_TOKENS = 1000


def factor(rule: Scale, d_k: int, init: str = "unit") -> float:
    """The factor on unit-variance logits for a scale rule and an initialisation."""
    return rule.factor(d_k) * INITS[init]


def spread_se(d_k: int) -> float:
    """The relative standard error of :func:`spread`, from the Wishart moments of Q^T Q and K^T K.

    With n queries and n keys, ||Q K^T||_F^2 has mean n^2 d_k and variance
    4 n^3 d_k + 2 n^2 d_k^2 + 2 n^2 d_k, so the variance estimate has a relative variance of
    about 4/(n d_k) + 2/n^2 and its square root a quarter of that.
    """
    n = SPREAD_TOKENS
    return math.sqrt(1 / (n * d_k) + 1 / (2 * n * n))


@runtime.memo
def spread(d_k: int) -> float:
    """The standard deviation of the 10^6 scores of 1,000 queries against 1,000 keys."""
    g = runtime.generator(d_k)
    q = torch.randn(SPREAD_TOKENS, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(SPREAD_TOKENS, d_k, generator=g, dtype=torch.float64)
    dev = runtime.device()
    return (q.to(dev) @ k.to(dev).T).std().item()


@runtime.memo
def logits(d_k: int, n_keys: int = 64, n_rows: int = N_ROWS) -> torch.Tensor:
    """Unscaled logits q·k, shape (n_rows, n_keys), float64 on the CPU."""
    if n_rows % KEY_SETS:
        raise ValueError(f"n_rows={n_rows}: a survey has a multiple of KEY_SETS ({KEY_SETS}) rows")
    g = runtime.generator(1_000_000 + 1_000 * n_keys + d_k)
    q = torch.randn(KEY_SETS, n_rows // KEY_SETS, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(KEY_SETS, n_keys, d_k, generator=g, dtype=torch.float64)
    dev = runtime.device()
    return (q.to(dev) @ k.to(dev).transpose(-2, -1)).reshape(n_rows, n_keys).cpu()


@dataclass
class Rows:
    """Softmax rows of ``factor * q·k``; every statistic is per row (or per key) on the CPU."""

    z: torch.Tensor  # the logits the softmax sees, (rows, keys)

    @cached_property
    def p(self) -> torch.Tensor:
        return torch.softmax(self.z, -1)

    @cached_property
    def max_weight(self) -> torch.Tensor:
        return self.p.max(-1).values

    @cached_property
    def entropy(self) -> torch.Tensor:
        return entropy(self.p)

    @property
    def effective_keys(self) -> torch.Tensor:
        """exp(entropy): n for a uniform row over n keys, 1 for a strictly one-hot row."""
        return self.entropy.exp()

    @property
    def gap(self) -> torch.Tensor:
        """The best minus the worst logit of each row."""
        return self.z.max(-1).values - self.z.min(-1).values

    @property
    def key_weight(self) -> torch.Tensor:
        """n * p_j for every key of every row (flattened): 1 is the uniform weight."""
        return (self.p * self.p.shape[-1]).flatten()

    @cached_property
    def spectral_norm(self) -> torch.Tensor:
        """The spectral norm of each row's softmax Jacobian diag(p) - p p^T."""
        return jacobian_spectral_norm(self.p)

    @property
    def trace(self) -> torch.Tensor:
        """The trace of each row's softmax Jacobian, 1 - ||p||^2."""
        return jacobian_trace(self.p)

    def one_hot(self, threshold: float = ONE_HOT) -> float:
        """The share of rows whose largest weight is above ``threshold``."""
        return (self.max_weight > threshold).double().mean().item()


@runtime.memo
def rows(d_k: int, scale: float, n_keys: int = 64, n_rows: int = N_ROWS) -> Rows:
    """The survey's ``n_rows`` rows of ``n_keys`` keys at head dimension ``d_k``, logits times
    ``scale`` (a multiple of ``KEY_SETS`` rows; more rows, a smaller standard error)."""
    return Rows(logits(d_k, n_keys, n_rows) * scale)


def standard_error(per_row: torch.Tensor, statistic=torch.mean) -> float:
    """The spread of ``statistic`` over the survey's key sets, divided by sqrt(KEY_SETS).

    Rows that share a key set are not independent; the key sets are.
    """
    per_set = torch.stack([statistic(chunk) for chunk in per_row.reshape(KEY_SETS, -1)])
    return per_set.std().item() / math.sqrt(KEY_SETS)
