"""The environment variables that steer a run, named once; imports neither torch nor matplotlib.

The library (:mod:`sdpa.runtime`), the build (``sitebuild``) and the tests read these
names from here, so that none of them spells one itself:

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
                          snippet's data for the test session (``sitebuild/keep.py``)
========================  ==============================================================
"""

from __future__ import annotations

import os

DEVICE = "SDPA_DEVICE"
THREADS = "SDPA_THREADS"
SEED_OFFSET = "SDPA_SEED_OFFSET"
PROFILE = "SDPA_PROFILE"
CACHE = "SDPA_CACHE"
JOBS = "SDPA_JOBS"
BUILT_SITE = "SDPA_BUILT_SITE"
CHROMIUM = "SDPA_CHROMIUM"
KEEP_RUNS = "SDPA_KEEP_RUNS"

#: The two sizes of every experiment (see :func:`sdpa.runtime.profile`).
PROFILES = ("quick", "full")


def _get(name: str) -> str:
    return os.environ.get(name, "").strip()


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
