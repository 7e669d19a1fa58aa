"""A content-addressed cache of executed snippets, for a fast ``mkdocs serve``.

A snippet's key hashes everything its output can depend on: its own source, the source
of every module under ``snippets/`` that it imports (followed transitively through the
import statements), the options it runs under, and everything else that changes what a
snippet prints (:func:`environment`): the Python, torch, numpy and matplotlib versions, the
device, the profile, the CPU thread count and the seed offset. The runner keeps two
entries per fence: its HTML, keyed with the fence's markdown-exec options, and what the
snippet printed, keyed with its file name (what the workers' plan can know before the
page is read, and what a fence with other options shows without running). Edit a shared
helper and every snippet that imports it gets new keys; edit prose only and every key
stays the same.

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
import re
from functools import cache, lru_cache
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

from sdpa import env  # the environment variables' names and readers; imports no torch

CACHE_DIR = Path(".cache") / "snippets"
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")  # a module name such as sdpa.runtime
FORMAT = "3"  # what an entry holds, and what a key hashes; a new format makes new keys, so no old entry is read


def enabled(command: str) -> bool:
    """Whether this build uses the cache: on for ``serve``, off for ``build``, unless set."""
    setting = os.environ.get(env.CACHE, "").strip().lower()
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
    """The absolute module names that ``source`` imports (``from a import b`` gives a, a.b).

    A module that imports lazily, ``import_module(name)`` with a name it computes (the
    ``sdpa`` package loads ``sdpa.seed``'s module on first use, from its ``_HOMES``
    table), may import any dotted name it spells as a string: those count too. A name
    that is no module under the snippet folders adds nothing."""
    names: list[str] = []
    lazy = False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module":
            argument = node.args[0] if node.args else None
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                names.append(argument.value)
            else:
                lazy = True
    if lazy:
        names += [node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)
                  and isinstance(node.value, str) and DOTTED.fullmatch(node.value)]
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
    """The device the snippets run on, as ``sdpa.runtime.device()`` names it.

    ``SDPA_DEVICE`` when set (``sdpa.runtime.device`` takes it as written); otherwise
    torch decides, and :func:`_torch_device` asks it once per process. A rebuild under
    ``mkdocs serve`` whose snippets are all cached thus imports no torch on a machine
    where the answer is known without it."""
    return env.wanted_device() or _torch_device()


@cache
def _torch_device() -> str:
    """What ``sdpa.runtime.device()`` gives with ``SDPA_DEVICE`` unset, asked once per process.

    A torch built with neither CUDA nor ROCm never sees a GPU: ``cpu``, known without
    importing torch. Any other torch is asked, by the library itself (a second of
    importing torch, once per ``mkdocs serve``)."""
    if not _torch_built_for_a_gpu():
        return "cpu"
    from sdpa.runtime import device as runtime_device  # asks torch whether it sees a GPU

    return str(runtime_device())


def _torch_built_for_a_gpu() -> bool:
    """Whether the installed torch was built with CUDA or ROCm, as ``torch.version.cuda``
    and ``torch.version.hip`` say, read from ``torch/version.py`` without importing torch."""
    spec = find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return False  # no torch: no snippet runs
    source = Path(spec.submodule_search_locations[0], "version.py").read_text()
    built = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    built[target.id] = node.value.value
    return built.get("cuda") is not None or built.get("hip") is not None


@cache
def _versions() -> dict[str, str]:
    """The versions a snippet's output depends on (read once per process: half a
    millisecond each, for each of a build's hundred keys)."""
    return {
        "python": platform.python_version(),
        "torch": version("torch"),
        "numpy": version("numpy"),  # numbers, and the random draws of np.random
        "matplotlib": version("matplotlib"),  # the SVG
    }


def environment(device: str) -> dict[str, str]:
    """What, besides its code and options, changes what a snippet prints on ``device``."""
    return {
        **_versions(),
        "device": device,
        "profile": env.profile_for(device),  # the size of every experiment
        "threads": str(env.threads()),  # the order of float reductions, so the bits
        "seed_offset": str(env.seed_offset()),  # a shifted run is another result
    }


def snippet_key(source: str, options: dict, bases: list[Path], device: str, memo: dict | None = None) -> str:
    """The cache key of one snippet's run (``memo``: as for :func:`imported_files`)."""
    memo = {} if memo is None else memo
    digest = hashlib.sha256()
    for part in (FORMAT, source, repr(sorted((k, repr(v)) for k, v in options.items())),
                 repr(sorted(environment(device).items()))):
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
