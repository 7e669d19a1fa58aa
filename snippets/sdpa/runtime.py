"""Device, seeds and thread count: the run-time state every snippet shares.

Seeding rule (every snippet and the library follow it): random numbers are drawn on the
CPU from a generator made by :func:`generator` (or returned by :func:`seed`), and only
then moved to :func:`device`. CPU and GPU runs therefore start from the same numbers::

    g = sdpa.seed(0)                                    # at the top of the snippet
    x = torch.randn(256, 64, generator=g).to(sdpa.device())

Every seed passes through this module, which adds the integer in the environment
variable ``SDPA_SEED_OFFSET`` (default 0): ``SDPA_SEED_OFFSET=1`` reruns every snippet and
experiment with every seed shifted by one, to check that a claim does not hang on one draw.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator

import numpy as np
import torch

#: Environment variable that forces the device: ``cpu`` or ``cuda``.
DEVICE_ENV = "SDPA_DEVICE"
#: Environment variable for the CPU thread count. It is fixed (default 1) because float
#: reductions split across threads add in another order: a fixed count gives the same
#: bits on every machine. The site's tensors are small, so one thread is also the
#: fastest choice on a busy or a 2-core machine.
THREADS_ENV = "SDPA_THREADS"
#: Environment variable added to every seed (default 0).
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
    """The integer in ``SDPA_SEED_OFFSET`` (0 when unset)."""
    return int(os.environ.get(SEED_OFFSET_ENV, "0") or 0)


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed`` plus the seed offset: draw here, then move."""
    return torch.Generator().manual_seed(seed + seed_offset())


def seed(value: int = 0) -> torch.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA); return ``generator(value)``.

    Call it once at the top of a snippet and draw from the returned generator, so that
    results do not depend on what ran before.
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
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + seed_offset())
        yield


fix_threads()
