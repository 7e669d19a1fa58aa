"""The serve cache's keys: stable for unchanged input, new for anything the output depends on.

These tests compute keys only; no test reads a cached result. Three of them replay the
ways an older key served a stale page: a Markdown option changed (line numbers), a
module reached lazily (``import sdpa`` then ``sdpa.recall``), and a thread count.
"""

from __future__ import annotations

import shutil
import sys

import pytest
from mkdocs.config import load_config

from conftest import REPO, SNIPPETS, included_snippets
from sdpa import env
from sitebuild import cache as snippet_cache
from sitebuild.runner import SnippetRunner

OPTIONS = {"source": "tabbed-right"}


def keys(base):
    """Every included snippet's key, the library read once for them all (as a build does)."""
    library = snippet_cache.library_digest([base])
    return {s: snippet_cache.snippet_key((base / s).read_text(), OPTIONS, library, "cpu") for s in included_snippets()}


def test_keys_are_stable():
    assert keys(SNIPPETS) == keys(SNIPPETS)


def test_editing_any_library_module_changes_every_key(tmp_path):
    """The whole package is in every key: an import a snippet makes on first use
    (``import sdpa`` then ``sdpa.recall.run_recall``) cannot be missed."""
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    lazy = "import sdpa\n\nresult = sdpa.recall.run_recall\n"
    library = snippet_cache.library_digest([copy])
    before = {**keys(copy), "lazy": snippet_cache.snippet_key(lazy, OPTIONS, library, "cpu")}
    with (copy / "sdpa" / "recall.py").open("a") as module:
        module.write("\n# an edit to a module reached lazily\n")
    library = snippet_cache.library_digest([copy])
    after = {**keys(copy), "lazy": snippet_cache.snippet_key(lazy, OPTIONS, library, "cpu")}
    assert not {name for name in before if before[name] == after[name]}, "a key the edit left as it was"


def test_snippet_source_and_options_change_the_key():
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    library = snippet_cache.library_digest([SNIPPETS])
    base = snippet_cache.snippet_key(source, OPTIONS, library, "cpu")
    assert snippet_cache.snippet_key(source + "\n", OPTIONS, library, "cpu") != base
    assert snippet_cache.snippet_key(source, OPTIONS, library, "cuda") != base
    assert snippet_cache.snippet_key(source, {"source": "tabbed-left"}, library, "cpu") != base


def _fence_key(monkeypatch, **mdx_configs) -> str:
    """The key the runner of a ``mkdocs serve`` of the site gives a fence's HTML, under the
    site's Markdown configuration with ``mdx_configs`` changed."""
    monkeypatch.delenv(env.CACHE, raising=False)  # serve: the cache on
    monkeypatch.chdir(REPO)
    config = load_config(str(REPO / "mkdocs.yml"))
    config.mdx_configs.update(mdx_configs)
    config.plugins["markdown-exec"].on_config(config)  # it registers the python fence the runner takes over
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    return SnippetRunner(config, "serve")._cache_key(source, OPTIONS)


def test_the_markdown_configuration_changes_the_key(monkeypatch):
    """``pymdownx.highlight: {linenums: true}``, then ``mkdocs serve`` again: every Source tab
    is rendered anew, with line numbers (an older key kept the cached tabs without them)."""
    base = _fence_key(monkeypatch)
    assert _fence_key(monkeypatch) == base
    assert _fence_key(monkeypatch, **{"pymdownx.highlight": {"linenums": True}}) != base


@pytest.mark.parametrize(("name", "value"), [
    (env.SEED_OFFSET, "1"),  # a shifted run is another result
    (env.THREADS, "2"),  # float reductions add in another order: other bits
    (env.PROFILE, "full"),  # other sizes of every experiment
])
def test_the_environment_changes_the_key(monkeypatch, name, value):
    source = (SNIPPETS / "derivation" / "score_std.py").read_text()
    for unset in (env.SEED_OFFSET, env.THREADS, env.PROFILE):
        monkeypatch.delenv(unset, raising=False)
    library = snippet_cache.library_digest([SNIPPETS])
    base = snippet_cache.snippet_key(source, OPTIONS, library, "cpu")
    monkeypatch.setenv(name, value)
    assert snippet_cache.snippet_key(source, OPTIONS, library, "cpu") != base


def test_the_cache_and_the_memo_key_on_one_run_context(monkeypatch):
    """The library's memo and the cache read the run's context from one function."""
    from sdpa import runtime

    monkeypatch.setenv(env.THREADS, "2")
    assert runtime.context() == env.run_context("cpu")
    assert dict(env.run_context("cpu")).items() <= snippet_cache.environment("cpu").items()
    assert dict(env.run_context("cpu"))["threads"] == "2"


def test_the_key_names_every_version_the_output_depends_on(monkeypatch):
    """Python, torch, numpy (numbers, np.random) and matplotlib (the SVG) in the run's
    environment; MkDocs, Markdown, pymdown-extensions, Pygments, markdown-exec and math-core
    in what renders it: a new version of any makes new keys."""
    monkeypatch.delenv(env.PROFILE, raising=False)
    described = snippet_cache.environment("cpu")
    assert set(described) >= {"python", "torch", "numpy", "matplotlib", "device", "profile", "threads",
                              "seed_offset"}
    assert (described["profile"], snippet_cache.environment("cuda")["profile"]) == ("quick", "full")
    config = load_config(str(REPO / "mkdocs.yml"))
    before = snippet_cache.environment("cpu"), snippet_cache.rendering(config)
    real = snippet_cache.versions
    for package in (*snippet_cache.COMPUTING, *snippet_cache.RENDERING):
        monkeypatch.setattr(snippet_cache, "versions", lambda packages, package=package: {
            **real(packages), **({package: "0.0"} if package in packages else {})})
        assert (snippet_cache.environment("cpu"), snippet_cache.rendering(config)) != before, package


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
    environment = env.environment(drop=(env.DEVICE,))
    device, imported, gpu_build = subprocess.run(
        [sys.executable, "-c", probe], cwd=SNIPPETS.parent, env=environment, capture_output=True, text=True,
        check=True).stdout.split()
    if gpu_build == "True":
        pytest.skip("this torch is built for a GPU: it is asked, once per process")
    assert (device, imported) == ("cpu", "False")
