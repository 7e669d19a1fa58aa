"""Device, profile, seeds, threads and the one memo: the run-time state every snippet shares.

Seeding rule (every snippet and the library follow it): random numbers are drawn on the
CPU from a generator made by :func:`generator` (or returned by :func:`seed`), and only
then moved to :func:`device`. CPU and GPU runs therefore start from the same numbers::

    g = sdpa.seed(0)                  # at the top of a snippet that draws random numbers
    x = torch.randn(256, 64, generator=g).to(sdpa.device())

A snippet that draws nothing itself calls no :func:`seed`: the experiments it reads carry
their seeds in their configurations.

Importing this module (or any of the library) changes no state a computation reads (it notes the
library files it imports, for :func:`code`). A run pins the CPU
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
and the versions) and on the library's code as this process runs it (:func:`code`). :func:`memo`
keys on all three; with ``share=True`` (the engines' runs, which hold the compute) it keeps
its results in the store (``SDPA_STORE``), where the build's snippets keep theirs: one run
of each experiment serves every process, the build's and the tests', until its code or
context changes. A result carries the training loops that stepped an optimiser to make it
(:func:`loops`), which the memo replays whenever it serves the result. The environment
variables are named in :mod:`sdpa.env`.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.machinery
import inspect
import os
import random
import sys
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


class _AsImported:
    """A finder that notes each library file's digest as the module is imported (the
    regular finders then load it): the code this process runs, whatever the disk says later."""

    def find_spec(self, name: str, path=None, target=None):
        if name.split(".")[0] == "sdpa":
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.origin:
                _imported.setdefault(Path(spec.origin), _digest(Path(spec.origin)))
        return None


def _digest(path: Path) -> str:
    """The digest of ``path``'s bytes (read again only when its size or time changed)."""
    stat = path.stat()
    when = (stat.st_mtime_ns, stat.st_size)
    if _on_disk.get(path, ((), ""))[0] != when:
        _on_disk[path] = when, hashlib.sha256(path.read_bytes()).hexdigest()
    return _on_disk[path][1]


_on_disk: dict[Path, tuple[tuple[int, int], str]] = {}


_imported = {Path(module.__file__): _digest(Path(module.__file__))
             for name, module in list(sys.modules.items())
             if name.split(".")[0] == "sdpa" and getattr(module, "__file__", None)}
sys.meta_path.insert(0, _AsImported())


def code() -> str:
    """The digest of the library's code as this process runs it: each module it has
    imported as it was then, the others as they are on disk now (as it would import them)."""
    digest = hashlib.sha256()
    for path in sorted(env.LIBRARY.rglob("*.py")):
        name = path.relative_to(env.LIBRARY.parent).as_posix()
        digest.update(f"{name}\0{_imported.get(path) or _digest(path)}\0".encode())
    return digest.hexdigest()


class StaleCode(RuntimeError):
    """A library file changed on disk while a result was computed, and the process imported
    it: what it computed belongs to neither version, so it is not stored."""


#: What :func:`memo`'s ``claim`` returns for a result that another process is computing.
BUSY = object()

_recording: list[set[str]] = []  # the sets :func:`loops` is filling, innermost last
_hook: list = []  # the optimiser-step hook's handle while one is recording


def _stepped(optimizer, args, kwargs) -> None:
    """After each ``optimizer.step()``: note the function that called it (its module and name,
    or the snippet's file) in every set :func:`loops` is filling."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "torch":
        frame = frame.f_back
    if frame is not None:
        module = frame.f_globals.get("__name__", "")
        _note({f"{module}.{frame.f_code.co_qualname}" if module.split(".")[0] == "sdpa"
               else frame.f_code.co_filename})


def _note(names) -> None:
    for found in _recording:
        found.update(names)


@contextlib.contextmanager
def loops() -> Iterator[set[str]]:
    """The training loops that step an optimiser within the block (``{"sdpa.training.train"}``),
    those of the results :func:`memo` serves in it included (a result made before carries
    its loops with it). The build records a snippet's (``sitebuild/execute.py``)."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    found: set[str] = set()
    if not _recording:
        _hook.append(register_optimizer_step_post_hook(_stepped))
    _recording.append(found)
    try:
        yield found
    finally:
        _recording[:] = [other for other in _recording if other is not found]
        if not _recording:
            _hook.pop().remove()


def _computed(compute: Callable[[], object], name: str) -> tuple[object, list[str]]:
    """``compute()`` and the loops it stepped, refused if the library it ran changed meanwhile."""
    before = code()
    with loops() as found:
        value = compute()
    if code() != before:
        raise StaleCode(f"{env.LIBRARY} changed while {name} ran: not stored; run again")
    return value, sorted(found)


def _stored(name: str, key, compute: Callable[[], object], wait: bool):
    """The result for ``key`` of the memo ``name`` and its loops, from the store
    (``SDPA_STORE``): loaded, or computed here under the key's lock and written whole (to a
    temporary name, then renamed); while another process holds the lock, :data:`BUSY`, or
    (``wait``) the result it writes. The lock is the kernel's (``flock``): a process that
    dies releases it. Without a store, computed."""
    folder = env.store()
    if folder is None:
        return _computed(compute, name)
    result = folder / "memo" / name / f"{hashlib.sha256(repr(key).encode()).hexdigest()[:32]}.pt"
    result.parent.mkdir(parents=True, exist_ok=True)
    with open(result.with_suffix(".lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return BUSY
        if result.exists():
            stored = torch.load(result, weights_only=False)
            return stored["value"], stored["loops"]
        value, found = _computed(compute, name)
        partial = result.with_suffix(f".{os.getpid()}.part")
        torch.save({"value": value, "loops": found}, partial)
        os.replace(partial, result)
        return value, found


#: ``on_part(name, done, total)``, if set, hears of each piece :func:`each` has in hand (the
#: build's workers report it as progress).
on_part: Callable[[str, int, int], None] | None = None


def memo(function: F | None = None, *, share: bool = False) -> F:
    """Remember ``function``'s results, keyed on its arguments (defaults filled in, so
    ``f()`` and ``f(default)`` are one run), on :func:`context` and on the library's
    :func:`code`, each with the training loops that made it (:func:`loops`); a run starts
    with the thread count pinned (:func:`fix_threads`).

    The arguments must be hashable: the experiments' frozen configurations are. Every
    snippet that asks for the same run in one process shares it; a run under another seed
    offset, device, profile or thread count is another result. With ``share``
    (``@memo(share=True)``: the engines' runs, which hold the compute) results also go to
    the store (:func:`_stored`): each is computed by
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
        if key not in results:  # (a result made here was made by the code this process runs)
            def compute():
                return function(*args, **kwargs)

            found = (_stored(name, (code(), *key), compute, wait) if share
                     else _computed(compute, name))
            if found is BUSY:
                return BUSY
            results[key] = found
        value, trained = results[key]
        _note(trained)
        return value

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
    name = f"{function.__module__}.{function.__qualname__}"
    while len(out) < len(calls):
        taken = False
        for i, call in enumerate(calls):
            if i not in out:
                value = function.claim(*call)
                if value is not BUSY:
                    out[i], taken = value, True
                    if on_part is not None:
                        on_part(name, len(out), len(calls))
        if not taken:
            time.sleep(0.2)
    return [out[i] for i in range(len(calls))]
