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
``SDPA_PROFILE``          ``quick`` or ``full``: the size of the experiments (default:
                          ``full`` on a GPU, ``quick`` on a CPU)
``SDPA_CACHE``            ``1`` or ``0``: read and write the snippet cache (default: only
                          under ``mkdocs serve``)
``SDPA_JOBS``             the build's worker processes (default: the usable CPU cores)
``SDPA_BUILT_SITE``       tests only: a folder holding a site you built, to test it instead
                          of building one
``SDPA_CHROMIUM``         tests only: the Chromium binary the browser tests drive
``SDPA_KEEP_RUNS``        tests only: a folder where the build's workers keep each
                          snippet's data for the test session (``tests/harness.py``)
``SDPA_SHARED_MEMO``      a folder through which the processes of one build (or test
                          session) share their memoised experiments (set by the build's
                          pool and the test session: :func:`sdpa.runtime.memo`)
``CI``                    set (``true``) on a CI runner: a test that would skip for want
                          of a tool (Chromium, Java, ``unshare``) fails instead
========================  ==============================================================
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

DEVICE = "SDPA_DEVICE"
THREADS = "SDPA_THREADS"
SEED_OFFSET = "SDPA_SEED_OFFSET"
PROFILE = "SDPA_PROFILE"
CACHE = "SDPA_CACHE"
JOBS = "SDPA_JOBS"
BUILT_SITE = "SDPA_BUILT_SITE"
CHROMIUM = "SDPA_CHROMIUM"
KEEP_RUNS = "SDPA_KEEP_RUNS"
SHARED_MEMO = "SDPA_SHARED_MEMO"
CI = "CI"

#: The two sizes of every experiment (see :func:`sdpa.runtime.profile`).
PROFILES = ("quick", "full")

_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _get(name: str) -> str:
    return os.environ.get(name, "").strip()


def _switch(name: str) -> bool | None:
    """A yes/no variable: True, False, or None when unset (or empty)."""
    value = _get(name).lower()
    if value and value not in _YES + _NO:
        raise ValueError(f"{name} must be one of {', '.join(_YES + _NO)}, not {value!r}")
    return value in _YES if value else None


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


def seed_offset() -> int:
    """``SDPA_SEED_OFFSET`` (default 0)."""
    return int(_get(SEED_OFFSET) or 0)


def wanted_profile() -> str | None:
    """``SDPA_PROFILE`` when set (``quick`` or ``full``), else None (the device decides)."""
    value = _get(PROFILE).lower()
    if value and value not in PROFILES:
        raise ValueError(f"{PROFILE} must be one of {', '.join(PROFILES)}, not {value!r}")
    return value or None


def profile_for(device: str) -> str:
    """The profile a run on ``device`` (``cpu``, ``cuda``, ``cuda:1``) uses: ``SDPA_PROFILE``
    when set, else ``full`` on a GPU and ``quick`` on a CPU."""
    return wanted_profile() or ("full" if device.startswith("cuda") else "quick")


def run_context(device: str) -> tuple[tuple[str, str], ...]:
    """What a result computed on ``device`` depends on besides its code and arguments: the
    device, the profile (the size of every experiment), the CPU thread count (the order of
    float reductions, so the bits) and the seed offset. The memo (:func:`sdpa.runtime.memo`)
    and the snippet cache (``sitebuild/cache.py``) both key on it."""
    return (("device", device), ("profile", profile_for(device)), ("threads", str(threads())),
            ("seed_offset", str(seed_offset())))


# ---- the build and the tests ---------------------------------------------------------------


def cache() -> bool | None:
    """``SDPA_CACHE``: True or False when set, None when unset (the command decides)."""
    return _switch(CACHE)


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


def keep_runs() -> Path | None:
    """``SDPA_KEEP_RUNS``: where the build's workers keep each snippet's run for the tests."""
    return _path(KEEP_RUNS)


def shared_memo() -> Path | None:
    """``SDPA_SHARED_MEMO``: the folder through which this build's processes share their
    memoised experiments, when set."""
    return _path(SHARED_MEMO)


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
