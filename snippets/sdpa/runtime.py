"""Device, profile, seeds, threads and the one memo: the run-time state every snippet shares.

Seeding rule (every snippet and the library follow it): random numbers are drawn on the
CPU from a generator made by :func:`generator` (or returned by :func:`seed`), and only
then moved to :func:`device`. CPU and GPU runs therefore start from the same numbers::

    g = sdpa.seed(0)                  # at the top of a snippet that draws random numbers
    x = torch.randn(256, 64, generator=g).to(sdpa.device())

A snippet that draws nothing itself calls no :func:`seed`: the experiments it reads carry
their seeds in their configurations.

Importing this module (or any of the library) changes no global state. A run pins the CPU
thread count (:func:`fix_threads`) where it starts: :func:`seed`, :func:`generator`,
:func:`seeded`, :func:`device` and every memoised experiment (:func:`memo`) call it first,
so a snippet computes with the same thread count however it was started.

Every seed passes through this module, which adds the integer in ``SDPA_SEED_OFFSET``
(default 0): ``SDPA_SEED_OFFSET=1`` reruns every snippet and experiment with every seed
shifted by one, to check that a claim does not hang on one draw.

A result depends on more than its configuration: on the run's context
(:func:`sdpa.env.run_context`: the device, the profile, the thread count and the seed
offset). :func:`memo` keys on it, as the build's snippet cache does, and every memoised
experiment of the library uses it. The environment variables are named in :mod:`sdpa.env`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import random
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import torch

from sdpa import env

F = TypeVar("F", bound=Callable)


def device() -> torch.device:
    """CUDA when present, else the CPU; ``SDPA_DEVICE=cpu`` (or ``cuda``) overrides."""
    fix_threads()
    wanted = env.wanted_device()
    if wanted:
        if wanted.startswith("cuda") and not torch.cuda.is_available():
            raise RuntimeError(f"{env.DEVICE}={wanted} but torch sees no CUDA device")
        return torch.device(wanted)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def profile() -> str:
    """``quick`` or ``full``: ``SDPA_PROFILE`` when set, else ``full`` on a GPU and
    ``quick`` on a CPU. Each experiment states its size in both."""
    return env.profile_for(str(device()))


def fix_threads() -> None:
    """Pin the CPU thread count (``SDPA_THREADS``, default 1) so that parallel float
    reductions add in one order and give the same bits on every machine. The site's
    tensors are small, so one thread is also the fastest choice on a 2-core machine."""
    threads = env.threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


seed_offset = env.seed_offset


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed`` plus the seed offset: draw here, then move."""
    fix_threads()
    return torch.Generator().manual_seed(seed + seed_offset())


def seed(value: int = 0) -> torch.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA); return ``generator(value)``.

    Call it once at the top of a snippet that draws random numbers, and draw from the
    returned generator, so that results do not depend on what ran before.
    """
    fix_threads()
    value += seed_offset()
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)
    return torch.Generator().manual_seed(value)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run a block with torch's global CPU generator seeded, then restore its state.

    For code that draws from the global generator, such as building ``nn.Linear`` with
    its own initialisation: ``with seeded(3): layer = nn.Linear(64, 16)``.
    """
    fix_threads()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + seed_offset())
        yield


def context() -> tuple[tuple[str, str], ...]:
    """What a result depends on besides its arguments (:func:`sdpa.env.run_context`)."""
    return env.run_context(str(device()))


class Results(dict):
    """A memo's results, by key; it notes the keys read (a build's worker hands the results
    a page's snippets read to the test session: ``sitebuild/keep.py``)."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def memo(function: F) -> F:
    """Remember ``function``'s results per process, keyed on its arguments (defaults
    filled in, so ``f()`` and ``f(default)`` are one run) and on :func:`context`; a run
    starts with the thread count pinned (:func:`fix_threads`).

    The arguments must be hashable: the experiments' frozen configurations are. Every
    snippet that asks for the same run, in the build or in the test session, shares it;
    a run under another seed offset, device, profile or thread count is another result.
    """
    signature = inspect.signature(function)
    results = Results()

    @functools.wraps(function)
    def remembered(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (context(), tuple(bound.arguments.items()))  # context() pins the threads
        if key not in results:
            results[key] = function(*args, **kwargs)
        return results[key]

    remembered.results = results
    remembered.cache_clear = results.clear
    return remembered
