"""A content-addressed cache of executed snippets, for a fast ``mkdocs serve``.

A snippet's key hashes everything its output can depend on, so that no edit and no
upgrade can serve a stale result:

* its own source and the options it runs under;
* every file of the library package it can reach (the whole ``sdpa`` package: a
  snippet's imports cannot be traced completely, ``import sdpa`` then ``sdpa.recall``
  loading a module on first use), :func:`library_files`;
* the run's context (:func:`sdpa.env.run_context`: the device, the profile, the CPU
  thread count, the seed offset), the one the library's memo keys on too, and the
  versions of Python, torch, numpy and matplotlib (:func:`environment`);
* how its output is rendered (:func:`rendering`): the Markdown configuration of the build
  (every extension and its options), the versions of every package that renders it
  (MkDocs, Markdown, pymdown-extensions, Pygments, markdown-exec, math-core) and the
  build's own code (the ``sitebuild`` package).

The runner keeps two entries per fence: its HTML, keyed with the fence's markdown-exec
options, and what the snippet printed, keyed with its file name (what the workers' plan
can know before the page is read). Edit prose only and every key stays the same; edit
any library module and every snippet runs again.

``mkdocs serve`` reads and writes the cache by default; ``mkdocs build`` regenerates
every figure unless the builder sets ``SDPA_CACHE=1``; ``SDPA_CACHE=0`` turns it off
everywhere. The tests never read it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
from functools import cache
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

from markdown import Extension

from sdpa import env  # the environment variables' names and readers; imports no torch

CACHE_DIR = Path(".cache") / "snippets"
LIBRARY = "sdpa"  # the package under snippets/ that every snippet imports
BUILD = Path(__file__).resolve().parent  # the sitebuild package
FORMAT = "4"  # what an entry holds, and what a key hashes; a new format makes new keys, so no old entry is read


def enabled(command: str) -> bool:
    """Whether this build uses the cache: on for ``serve``, off for ``build``, unless set."""
    setting = env.cache()
    return command == "serve" if setting is None else setting


def library_files(bases: list[Path]) -> list[Path]:
    """Every file of the library package (``snippets/sdpa/``) under the first of ``bases``
    that holds it."""
    base = next((base for base in bases if (base / LIBRARY / "__init__.py").is_file()), None)
    return sorted((base / LIBRARY).rglob("*.py")) if base else []


def _digest_files(files: list[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def library_digest(bases: list[Path]) -> str:
    """A digest of every file of the library package (:func:`library_files`)."""
    files = library_files(bases)
    return _digest_files(files, files[0].parents[1]) if files else ""


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


#: The packages whose versions change what a snippet prints: numbers (torch, numpy) and SVG.
COMPUTING = ("torch", "numpy", "matplotlib")
#: The packages that turn what a snippet printed into a page's HTML.
RENDERING = ("mkdocs", "Markdown", "pymdown-extensions", "Pygments", "markdown-exec", "math-core")


@cache
def versions(packages: tuple[str, ...]) -> dict[str, str]:
    """The installed versions of ``packages`` (read once per process: half a millisecond each)."""
    return {package: version(package) for package in packages}


def environment(device: str) -> dict[str, str]:
    """What, besides its code and options, changes what a snippet prints on ``device``:
    the run's context (shared with the library's memo) and the computing packages."""
    return {"python": platform.python_version(), **versions(COMPUTING), **dict(env.run_context(device))}


def _stable(value) -> object:
    """``value`` (a Markdown extension's configuration) as plain data that reads the same in
    every process: an extension by its class and settings, a function by its name."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, dict):
        return sorted((str(key), _stable(item)) for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_stable(item) for item in (sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value)]
    if isinstance(value, Extension):
        return [type(value).__module__, type(value).__qualname__, _stable(value.getConfigs())]
    function = getattr(value, "__func__", value)
    return f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', type(function).__qualname__)}"


def rendering(config) -> str:
    """A digest of what renders a snippet's output in the build of ``config``: its Markdown
    extensions and their options, the rendering packages' versions, the build's own code."""
    parts = [_stable(config.markdown_extensions), _stable(config.mdx_configs), versions(RENDERING),
             _digest_files(sorted(BUILD.rglob("*.py")), BUILD)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def snippet_key(source: str, options: dict, library: str, device: str, rendered: str = "") -> str:
    """The cache key of one snippet's run: its ``source`` and ``options``, the ``library``'s
    digest (:func:`library_digest`), the run's :func:`environment` on ``device`` and the
    digest of what renders it (:func:`rendering`)."""
    digest = hashlib.sha256()
    for part in (FORMAT, source, repr(sorted((k, repr(v)) for k, v in options.items())), library,
                 repr(sorted(environment(device).items())), rendered):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def load(key: str) -> dict | None:
    path = CACHE_DIR / f"{key}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def store(key: str, entry: dict) -> None:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = CACHE_DIR / f"{key}.tmp"
    tmp.write_text(json.dumps(entry))
    tmp.replace(CACHE_DIR / f"{key}.json")
