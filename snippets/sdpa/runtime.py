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
shifted by one. Every seed is below :data:`SEED_BLOCK` before the shift, so the offsets
``b * SEED_BLOCK`` give disjoint seed blocks: independent draws, on which a claim's
margin is measured.

A result depends on more than its configuration: on the run's context
(:func:`sdpa.env.run_context`: the device, the profile, the thread count, the seed offset
and the versions) and on the library's code. :func:`memo` keys on all three; with
``share=True`` (the engines' runs, which hold the compute) it keeps its results in the
store (``SDPA_STORE``), where the build's snippets keep theirs: one run of each experiment
serves every process, the build's and the tests', until its code or context changes. The
environment variables are named in :mod:`sdpa.env`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
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
    """``quick`` (the default, on a CPU or a GPU) or ``full`` (``SDPA_PROFILE=full``, what
    the published site is built with). Each experiment states its size in both."""
    return env.profile()


def fix_threads() -> None:
    """Pin the CPU thread count (``SDPA_THREADS``, default 1) so that parallel float
    reductions add in one order and give the same bits on every machine. The site's
    tensors are small, so one thread is also the fastest choice on a 2-core machine."""
    threads = env.threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


seed_offset = env.seed_offset
SEED_BLOCK = env.SEED_BLOCK


def shifted(seed: int) -> int:
    """``seed`` plus the seed offset; a seed outside ``[0, SEED_BLOCK)`` is refused, so
    that no two seed blocks ever share a draw."""
    if not 0 <= seed < SEED_BLOCK:
        raise ValueError(f"seed {seed} is outside [0, {SEED_BLOCK:,}): seed blocks would overlap")
    return seed + seed_offset()


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed`` plus the seed offset: draw here, then move."""
    fix_threads()
    return torch.Generator().manual_seed(shifted(seed))


def seed(value: int = 0) -> torch.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA); return ``generator(value)``.

    Call it once at the top of a snippet that draws random numbers, and draw from the
    returned generator, so that results do not depend on what ran before.
    """
    fix_threads()
    value = shifted(value)
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
        torch.manual_seed(shifted(seed))
        yield


def context() -> tuple[tuple[str, str], ...]:
    """What a result depends on besides its arguments (:func:`sdpa.env.run_context`)."""
    return env.run_context(str(device()))


#: The library's code as this process imports it: its files' digest, read when this module
#: is first imported (before any experiment runs), and read again before a result is stored.
CODE = env.code_digest()


class StaleCode(RuntimeError):
    """The library's files changed on disk after this process imported them: what it
    computes now belongs to neither version, so it is not stored."""


#: What :func:`memo`'s ``claim`` returns for a result that another process is computing.
BUSY = object()


def _stored(name: str, key, compute: Callable[[], object], wait: bool):
    """The result for ``key`` of the memo ``name`` in the store (``SDPA_STORE``): loaded,
    or computed here under the key's lock and written whole (to a temporary name, then
    renamed); while another process holds the lock, :data:`BUSY`, or (``wait``) the result
    it writes. The file's name hashes the key and :data:`CODE`; without a store, computed."""
    folder = env.store()
    if folder is None:
        return compute()
    digest = hashlib.sha256(repr((CODE, key)).encode()).hexdigest()[:32]
    result = folder / "memo" / name / f"{digest}.pt"
    lock = result.with_suffix(".lock")
    result.parent.mkdir(parents=True, exist_ok=True)
    while True:
        if result.exists():
            return torch.load(result, weights_only=False)
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if not _alive(lock):  # its process died: take the key over
                lock.unlink(missing_ok=True)
            elif not wait:
                return BUSY
            else:
                time.sleep(0.2)
            continue
        with os.fdopen(fd, "w") as handle:
            handle.write(str(os.getpid()))
        try:
            value = compute()
            if env.code_digest() != CODE:
                raise StaleCode(f"{env.LIBRARY} changed while {name} ran: not stored; run again")
            partial = result.with_suffix(f".{os.getpid()}.part")
            torch.save(value, partial)
            os.replace(partial, result)
            return value
        finally:
            lock.unlink(missing_ok=True)


def _alive(lock: Path) -> bool:
    """Whether the process that wrote ``lock`` still runs (a lock being written is alive)."""
    try:
        pid = int(lock.read_text() or 0)
    except (OSError, ValueError):
        return True
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def memo(function: F | None = None, *, share: bool = False) -> F:
    """Remember ``function``'s results, keyed on its arguments (defaults filled in, so
    ``f()`` and ``f(default)`` are one run) and on :func:`context`; a run starts with the
    thread count pinned (:func:`fix_threads`).

    The arguments must be hashable: the experiments' frozen configurations are. Every
    snippet that asks for the same run in one process shares it; a run under another seed
    offset, device, profile or thread count is another result. With ``share``
    (``@memo(share=True)``: the engines' runs, which hold the compute) results also go to
    the store (:func:`_stored`), keyed on the library's code as well: each is computed by
    one process, and the others (the build's workers, the tests, a later build) load it
    or wait for it; :func:`each` splits a list of calls between the processes that ask
    for it. The studies that assemble those runs stay in each process: they are cheap.
    """
    if function is None:
        return functools.partial(memo, share=share)
    signature = inspect.signature(function)
    name = f"{function.__module__}.{function.__qualname__}"
    results: dict = {}

    def _get(args, kwargs, wait: bool):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (context(), tuple(bound.arguments.items()))  # context() pins the threads
        if key not in results:
            def compute():
                return function(*args, **kwargs)

            value = _stored(name, key, compute, wait) if share else compute()
            if value is BUSY:
                return BUSY
            results[key] = value
        return results[key]

    @functools.wraps(function)
    def remembered(*args, **kwargs):
        return _get(args, kwargs, wait=True)

    remembered.claim = lambda *args, **kwargs: _get(args, kwargs, wait=False)
    remembered.cache_clear = results.clear
    return remembered


def each(function: Callable, calls: list[tuple]) -> list:
    """``function(*call)`` for every call of ``calls`` (``function`` memoised with
    ``share=True``): the calls no other process has taken first, then the others as they
    are done, so that processes that ask for the same list split its work."""
    out: dict[int, object] = {}
    while len(out) < len(calls):
        taken = False
        for i, call in enumerate(calls):
            if i not in out:
                value = function.claim(*call)
                if value is not BUSY:
                    out[i], taken = value, True
        if not taken:
            time.sleep(0.2)
    return [out[i] for i in range(len(calls))]
