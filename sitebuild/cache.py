"""A content-addressed cache of executed snippets, for a fast ``mkdocs serve``.

A snippet's key hashes everything its output can depend on: its own source, the source
of every module under ``snippets/`` that it imports (followed transitively through the
import statements), the options it runs under, and the torch version, Python version,
device and seed offset. The runner keeps two entries per fence: its HTML, keyed with the
fence's markdown-exec options, and what the snippet printed, keyed with its file name
(what the workers' plan can know before the page is read, and what a fence with other
options shows without running). Edit a shared helper and every snippet that imports it
gets new keys; edit prose only and every key stays the same.

``mkdocs serve`` reads and writes the cache by default; ``mkdocs build`` regenerates
every figure unless the builder sets ``SDPA_CACHE=1``; ``SDPA_CACHE=0`` turns it off
everywhere. The tests never read it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import platform
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

CACHE_ENV = "SDPA_CACHE"
CACHE_DIR = Path(".cache") / "snippets"
FORMAT = "2"  # what an entry holds; a new format makes new keys, so no entry of an old one is read


def enabled(command: str) -> bool:
    """Whether this build uses the cache: on for ``serve``, off for ``build``, unless set."""
    setting = os.environ.get(CACHE_ENV, "").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return False
    if setting in ("1", "true", "yes", "on"):
        return True
    return command == "serve"


def _module_files(name: str, bases: list[Path]) -> list[Path]:
    """Files under ``bases`` that importing ``name`` (e.g. ``sdpa.recall``) executes."""
    parts, files = name.split("."), []
    for base in bases:
        for depth in range(1, len(parts) + 1):
            stem = base.joinpath(*parts[:depth])
            for candidate in (stem / "__init__.py", stem.with_suffix(".py")):
                if candidate.is_file():
                    files.append(candidate)
        if files:
            break
    return files


@lru_cache(maxsize=1024)
def _imported_names(source: str) -> tuple[str, ...]:
    """The absolute module names that ``source`` imports (``from a import b`` gives a, a.b)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return tuple(names)


def imported_files(source: str, bases: list[Path], memo: dict | None = None) -> list[Path]:
    """Every file under ``bases`` that ``source`` imports, directly or through others.

    ``memo`` (a dict kept for one build) remembers where each module name lives and each
    file's text, so the keys of a whole site cost a few hundred file lookups, not tens of
    thousands."""
    memo = {} if memo is None else memo
    seen: dict[Path, None] = {}
    pending = [source]
    while pending:
        for name in _imported_names(pending.pop()):
            if name not in memo:
                memo[name] = _module_files(name, bases)
            for path in memo[name]:
                if path not in seen:
                    seen[path] = None
                    if path not in memo:
                        memo[path] = path.read_text()
                    pending.append(memo[path])
    return sorted(seen)


def device() -> str:
    """The device the snippets run on, as ``sdpa.runtime.device()`` names it, without
    importing torch (two seconds of every ``mkdocs serve`` rebuild) where the answer is
    known already: ``SDPA_DEVICE`` is set, or the installed torch is a CPU-only build."""
    wanted = os.environ.get("SDPA_DEVICE", "").strip().lower()
    if wanted:
        return wanted
    if version("torch").endswith("+cpu"):
        return "cpu"
    from sdpa.runtime import device as runtime_device  # asks torch whether CUDA is there

    return str(runtime_device())


def snippet_key(source: str, options: dict, bases: list[Path], device: str, memo: dict | None = None) -> str:
    """The cache key of one snippet's run (``memo``: as for :func:`imported_files`)."""
    memo = {} if memo is None else memo
    digest = hashlib.sha256()
    seed_offset = os.environ.get("SDPA_SEED_OFFSET", "0")  # a shifted run is another result
    for part in (FORMAT, source, repr(sorted((k, repr(v)) for k, v in options.items())), version("torch"),
                 platform.python_version(), device, seed_offset):
        digest.update(part.encode() + b"\0")
    for path in imported_files(source, bases, memo):
        digest.update("/".join(path.parts[-2:]).encode() + b"\0" + memo[path].encode() + b"\0")
    return digest.hexdigest()


def load(key: str) -> dict | None:
    path = CACHE_DIR / f"{key}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def store(key: str, entry: dict) -> None:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = CACHE_DIR / f"{key}.tmp"
    tmp.write_text(json.dumps(entry))
    tmp.replace(CACHE_DIR / f"{key}.json")
