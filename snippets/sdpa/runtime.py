"""Device choice, seeding and thread count: the run-time state every snippet shares."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

#: Environment variable that forces the device: ``cpu`` or ``cuda``.
DEVICE_ENV = "SDPA_DEVICE"
#: Environment variable for the CPU thread count. It is fixed (default 1) because float
#: reductions split across threads add in another order: a fixed count gives the same
#: bits on every machine. The site's tensors are small, so one thread is also the
#: fastest choice on a busy or a 2-core machine.
THREADS_ENV = "SDPA_THREADS"
#: Environment variable holding an integer added to every seed (default 0). The claim
#: tests rerun with it set (``pytest -m claims --seed-offset N``) to check that what a
#: page says holds for other draws, not only for the seeds the page was written with.
SEED_OFFSET_ENV = "SDPA_SEED_OFFSET"


def device() -> torch.device:
    """CUDA when present, else the CPU; ``SDPA_DEVICE=cpu`` (or ``cuda``) overrides."""
    wanted = os.environ.get(DEVICE_ENV, "").strip().lower()
    if wanted:
        if wanted.startswith("cuda") and not torch.cuda.is_available():
            raise RuntimeError(f"{DEVICE_ENV}={wanted} but torch sees no CUDA device")
        return torch.device(wanted)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def fix_threads() -> None:
    """Pin the CPU thread count so that parallel float reductions give the same bits."""
    threads = int(os.environ.get(THREADS_ENV, "1"))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def seed_offset() -> int:
    """The integer in ``SDPA_SEED_OFFSET`` (0 when unset), added to every seed."""
    return int(os.environ.get(SEED_OFFSET_ENV, "0") or 0)


def generator(value: int) -> torch.Generator:
    """A CPU generator seeded with ``value`` plus the seed offset."""
    return torch.Generator().manual_seed(value + seed_offset())


def seed(value: int = 0) -> torch.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA); return a CPU generator from the seed.

    The seed offset is added first. Call it at the top of a snippet. Prefer the
    returned generator (or one from ``generator``) for sampling, so that results do not
    depend on what ran before.
    """
    fix_threads()
    value += seed_offset()
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)
    return torch.Generator().manual_seed(value)


fix_threads()
