"""The environment, read and written in one place; imports neither torch nor matplotlib.

Every variable that steers a run is named here and read through a typed function of this
module, by the library (:mod:`sdpa.runtime`), the build (``sitebuild``), the tests and the
scripts alike; ``ruff`` forbids ``os.environ`` and ``os.getenv`` everywhere else
(``banned-api`` in pyproject.toml). A process that starts another passes it
:func:`environment` (this one's, changed).

========================  ==============================================================
``SDPA_DEVICE``           ``cpu`` or ``cuda``: force the device (default: CUDA when torch
                          sees one, else the CPU)
``SDPA_THREADS``          the CPU thread count (default 1: fixed, so that float reductions
                          add in the same order and give the same bits)
``SDPA_SEED_OFFSET``      an integer added to every seed (default 0)
``SDPA_PROFILE``          ``quick`` or ``full``: the size of the experiments (default
                          ``quick``, on every device; the published site is ``full``)
``SDPA_STORE``            the folder of the store, where every snippet's run and every
                          engine's run (:func:`sdpa.runtime.memo`) is kept under a key of
                          all it depends on (the build and the tests: ``.cache/store``;
                          unset, a plain script keeps its runs in its process)
``SDPA_JOBS``             the worker processes that execute the snippets (default: the
                          usable CPU cores)
``SDPA_BUILT_SITE``       tests only: a folder holding a site you built, to test it instead
                          of building one (its code must be the checkout's)
``SDPA_CHROMIUM``         tests only: the Chromium binary the browser tests drive
``CI``                    set (``true``) on a CI runner: a test that would skip for want
                          of a tool (Chromium, Java, ``unshare``) fails instead
========================  ==============================================================

A result depends on its code too: :func:`code_digest` hashes the library's files (and the
build's, for a snippet's run), the key's other half.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import platform
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

DEVICE = "SDPA_DEVICE"
THREADS = "SDPA_THREADS"
SEED_OFFSET = "SDPA_SEED_OFFSET"
PROFILE = "SDPA_PROFILE"
STORE = "SDPA_STORE"
JOBS = "SDPA_JOBS"
BUILT_SITE = "SDPA_BUILT_SITE"
CHROMIUM = "SDPA_CHROMIUM"
CI = "CI"

#: The two sizes of every experiment (see :func:`sdpa.runtime.profile`).
PROFILES = ("quick", "full")

_NO = ("0", "false", "no", "off")


def _get(name: str) -> str:
    return os.environ.get(name, "").strip()


def _path(name: str) -> Path | None:
    value = _get(name)
    return Path(value).resolve() if value else None


# ---- the run: what a result depends on ---------------------------------------------------


def wanted_device() -> str:
    """``SDPA_DEVICE`` as written, lower case ("" when unset: let torch decide)."""
    return _get(DEVICE).lower()


def threads() -> int:
    """``SDPA_THREADS`` (default 1)."""
    return int(_get(THREADS) or 1)


#: Every seed the site draws from is below this before the offset is added
#: (:func:`sdpa.runtime.shifted` refuses any other), so offsets that are multiples of it shift
#: every run onto seeds no other such offset uses: independent seed blocks, block ``b`` being
#: offset ``b * SEED_BLOCK`` (``scripts/claims_sweep.py --blocks``).
SEED_BLOCK = 10_000_000


def seed_offset() -> int:
    """``SDPA_SEED_OFFSET`` (default 0)."""
    return int(_get(SEED_OFFSET) or 0)


def profile() -> str:
    """``SDPA_PROFILE``: ``quick`` (the default, on every device) or ``full``."""
    value = _get(PROFILE).lower() or "quick"
    if value not in PROFILES:
        raise ValueError(f"{PROFILE} must be one of {', '.join(PROFILES)}, not {value!r}")
    return value


#: The packages whose versions change what a run computes: numbers (torch, numpy) and SVG.
COMPUTING = ("torch", "numpy", "matplotlib")


def run_context(device: str) -> tuple[tuple[str, str], ...]:
    """What a result computed on ``device`` depends on besides its code and arguments: the
    device, the profile (the size of every experiment), the CPU thread count (the order of
    float reductions, so the bits), the seed offset, and the versions of Python and of the
    packages that compute. The store keys on it (:func:`sdpa.runtime.memo`, ``sitebuild``)."""
    return (("device", device), ("profile", profile()), ("threads", str(threads())),
            ("seed_offset", str(seed_offset())), ("python", platform.python_version()),
            *((package, _version(package)) for package in COMPUTING))


@functools.cache
def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return ""


#: The library's folder (``snippets/sdpa``).
LIBRARY = Path(__file__).resolve().parent


def code_digest(*paths: Path) -> str:
    """A digest of the Python files ``paths`` (a folder stands for every file under it;
    default: the library), names and bytes, read from disk now. A process keeps the digest
    it read before it imported the code, and stores nothing once the files differ from it
    (:func:`sdpa.runtime.memo`, ``sitebuild/execute.py``)."""
    digest = hashlib.sha256()
    for root in paths or (LIBRARY,):
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            name = path.relative_to(root.parent).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# ---- the build and the tests ---------------------------------------------------------------


def store() -> Path | None:
    """``SDPA_STORE``: the store's folder, when set."""
    return _path(STORE)


def jobs() -> int | None:
    """``SDPA_JOBS``, the build's worker processes, when set."""
    value = _get(JOBS)
    return max(1, int(value)) if value else None


def built_site() -> Path | None:
    """``SDPA_BUILT_SITE``: a site built beforehand, for the tests to read instead of their own."""
    return _path(BUILT_SITE)


def chromium() -> str | None:
    """``SDPA_CHROMIUM``: the Chromium binary the browser tests drive, when set."""
    return _get(CHROMIUM) or None


def ci() -> bool:
    """Whether this runs on CI (``CI`` set, as GitHub Actions sets it, and not ``false``)."""
    return bool(_get(CI)) and _get(CI).lower() not in _NO


# ---- writing: for this process and the processes it starts ---------------------------------


def environment(changes: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict:
    """This process's environment for a process it starts: ``drop`` left out, ``changes`` set."""
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **(changes or {})}


def export(**values: str | None) -> None:
    """Set variables for this process and those it starts from now on (None: unset one)."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def changed(**values: str | None) -> Iterator[None]:
    """:func:`export` for the length of a block, then every variable as it was."""
    saved = {name: os.environ.get(name) for name in values}
    export(**values)
    try:
        yield
    finally:
        export(**saved)


def replace(environment: dict[str, str]) -> None:
    """Make this process's environment exactly ``environment`` (a worker takes its parent's)."""
    os.environ.clear()
    os.environ.update(environment)


def prepend_path(name: str, folder: str) -> None:
    """Put ``folder`` first in the path list ``name`` (``JUPYTER_CONFIG_PATH``), once."""
    paths = [path for path in _get(name).split(os.pathsep) if path]
    if folder not in paths:
        export(**{name: os.pathsep.join([folder, *paths])})
