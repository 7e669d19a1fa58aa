"""The serve cache's keys: stable for unchanged code, new for every snippet a change reaches.

These tests compute keys only; no test reads a cached result.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from conftest import SNIPPETS, included_snippets
from sdpa import env
from sitebuild import cache as snippet_cache

OPTIONS = {"source": "tabbed-right"}


def keys(base):
    """Every included snippet's key, the library read once for them all (as a build does)."""
    memo: dict = {}
    return {
        s: snippet_cache.snippet_key((base / s).read_text(), OPTIONS, [base], "cpu", memo)
        for s in included_snippets()
    }


def test_keys_are_stable():
    assert keys(SNIPPETS) == keys(SNIPPETS)


def test_editing_a_shared_helper_invalidates_every_snippet_that_imports_it(tmp_path):
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = keys(copy)

    with (copy / "sdpa" / "attention.py").open("a") as helper:
        helper.write("\n# an edit to a shared helper\n")
    after = keys(copy)
    changed = {s for s in before if before[s] != after[s]}
    importers = {s for s in before if copy / "sdpa" / "attention.py" in snippet_cache.imported_files(
        (copy / s).read_text(), [copy])}
    direct = {s for s in before if "sdpa.attention" in (copy / s).read_text()}
    assert changed == importers
    assert direct <= changed, "a snippet that imports the helper by name kept its key"
    assert "derivation/beyond_independence.py" not in changed, "a snippet that never imports it was invalidated"

    # sdpa/runtime.py is imported by the package itself, so every snippet depends on it.
    with (copy / "sdpa" / "runtime.py").open("a") as helper:
        helper.write("\n# an edit every snippet sees\n")
    final = keys(copy)
    assert all(final[s] != after[s] for s in after)


def test_snippet_source_and_environment_change_the_key():
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    base = snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cpu")
    assert snippet_cache.snippet_key(source + "\n", OPTIONS, [SNIPPETS], "cpu") != base
    assert snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cuda") != base
    assert snippet_cache.snippet_key(source, {"source": "tabbed-left"}, [SNIPPETS], "cpu") != base


@pytest.mark.parametrize(("name", "value"), [
    (env.SEED_OFFSET, "1"),  # a shifted run is another result
    (env.THREADS, "2"),  # float reductions add in another order: other bits
    (env.PROFILE, "full"),  # other sizes of every experiment
])
def test_the_environment_changes_the_key(monkeypatch, name, value):
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    for unset in (env.SEED_OFFSET, env.THREADS, env.PROFILE):
        monkeypatch.delenv(unset, raising=False)
    base = snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cpu")
    monkeypatch.setenv(name, value)
    assert snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cpu") != base


def test_the_key_names_every_version_the_output_depends_on(monkeypatch):
    """Python, torch, numpy (numbers, np.random) and matplotlib (the SVG): a new version of
    one makes new keys. The profile follows the device unless SDPA_PROFILE says."""
    monkeypatch.delenv(env.PROFILE, raising=False)
    described = snippet_cache.environment("cpu")
    assert set(described) >= {"python", "torch", "numpy", "matplotlib", "device", "profile", "threads",
                              "seed_offset"}
    assert (described["profile"], snippet_cache.environment("cuda")["profile"]) == ("quick", "full")
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    base = snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cpu")
    for package in ("numpy", "matplotlib", "torch"):
        versions = {**snippet_cache._versions(), package: "0.0"}
        monkeypatch.setattr(snippet_cache, "_versions", lambda versions=versions: versions)
        assert snippet_cache.snippet_key(source, OPTIONS, [SNIPPETS], "cpu") != base, package


def test_cache_is_off_for_builds_and_on_for_serve(monkeypatch):
    monkeypatch.delenv(env.CACHE, raising=False)
    assert not snippet_cache.enabled("build") and snippet_cache.enabled("serve")
    monkeypatch.setenv(env.CACHE, "1")
    assert snippet_cache.enabled("build")
    monkeypatch.setenv(env.CACHE, "0")
    assert not snippet_cache.enabled("serve")


@pytest.mark.parametrize("setting", ["", "cpu", " CPU "])
def test_the_key_names_the_device_the_snippets_run_on(monkeypatch, setting):
    """``cache.device`` answers without torch where it can; it must agree with the library."""
    from sdpa.runtime import device

    monkeypatch.setenv(env.DEVICE, setting)
    assert snippet_cache.device() == str(device())


def test_the_device_of_a_cpu_only_torch_is_known_without_importing_torch(tmp_path):
    """The serve loop's MkDocs process, all snippets cached, imports no torch for the key."""
    import subprocess

    probe = ("import sys; from sitebuild import cache; device = cache.device(); "
             "print(device, 'torch' in sys.modules, cache._torch_built_for_a_gpu())")
    environment = {k: v for k, v in __import__("os").environ.items() if k != env.DEVICE}
    device, imported, gpu_build = subprocess.run(
        [sys.executable, "-c", probe], cwd=SNIPPETS.parent, env=environment, capture_output=True, text=True,
        check=True).stdout.split()
    if gpu_build == "True":
        pytest.skip("this torch is built for a GPU: it is asked, once per process")
    assert (device, imported) == ("cpu", "False")
