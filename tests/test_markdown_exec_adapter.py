"""What sitebuild.markdown_exec_adapter assumes of the pinned markdown-exec, checked.

If one of these fails after markdown-exec is upgraded, the adapter (and only it) needs
rewriting for the new version: the message says which assumption broke.
"""

from __future__ import annotations

from importlib.metadata import version

import markdown
import markdown_exec
import pytest
from mkdocs.config import load_config

from sitebuild import markdown_exec_adapter as adapter

VERSION = f"markdown-exec {version('markdown-exec')}"
FENCE = '```python exec="on" source="tabbed-right" title="snippets/page/name.py"\nprint("hello")\n```\n'


def _markdown(fence_format) -> markdown.Markdown:
    fences = [{"name": "python", "class": "python", "validator": markdown_exec.validator, "format": fence_format}]
    return markdown.Markdown(
        extensions=["pymdownx.superfences", "pymdownx.tabbed", "pymdownx.highlight", "md_in_html"],
        extension_configs={"pymdownx.superfences": {"custom_fences": fences},
                           "pymdownx.tabbed": {"alternate_style": True}},
    )


def test_the_plugin_registers_the_python_fence_that_the_adapter_reroutes(tmp_path, monkeypatch):
    monkeypatch.delenv("MKDOCS_CONFIG_DIR", raising=False)  # the plugin sets it; restored after
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins: [markdown-exec]\nmarkdown_extensions: [pymdownx.superfences]\n")
    config = load_config(str(tmp_path / "mkdocs.yml"))
    try:
        config = config.plugins.on_config(config)
    finally:
        markdown_exec.markdown_config.reset()  # the plugin keeps the config until on_post_build
    fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    python = [fence for fence in fences if fence.get("name") == "python"]
    assert python and python[0].get("format") is markdown_exec.formatter, (
        f"{VERSION}: its plugin no longer registers a python custom fence formatted by "
        "markdown_exec.formatter in on_config; route_python_fences must find the fence another way")

    def ours(*args, **kwargs):
        return ""

    adapter.route_python_fences(config.mdx_configs, ours)
    assert python[0]["format"] is ours


def test_base_format_runs_the_code_under_its_title_and_shows_the_output_in_tabs():
    calls = []

    def run(code: str, filename: str) -> str:
        calls.append((code, filename))
        return "<p>the output</p>"

    def fence_format(source, language, css_class, options, md, **kwargs):
        return adapter.render(source, options, md, run)

    html = _markdown(fence_format).convert(FENCE)
    assert calls == [('print("hello")', "snippets/page/name.py")], (
        f"{VERSION}: base_format no longer calls run(code, ..., **extra) with the fence's title in extra: "
        f"{calls}")
    assert "the output" in html and 'class="tabbed-set' in html, (
        f"{VERSION}: base_format no longer shows run()'s output in Source/Result tabs:\n{html}")
    assert "snippets/page/name.py</span>" in html, f"{VERSION}: the Source tab no longer shows the title:\n{html}"


def test_the_fence_id_prefixes_the_ids_of_its_tabs():
    def fence_format(source, language, css_class, options, md, **kwargs):
        return adapter.render(source, options, md, lambda code, filename: "out")

    html = _markdown(fence_format).convert(FENCE)
    assert 'id="snippets/page/name.py-__tabbed_1_1"' in html, (
        f"{VERSION}: the fence's id no longer prefixes the ids of its tabs; cached results could repeat "
        f"ids on a page:\n{html}")


def test_sessions_are_refused():
    def fence_format(source, language, css_class, options, md, **kwargs):
        return adapter.render(source, options, md, lambda code, filename: "out")

    with pytest.raises(adapter.FenceError, match="sessions"):
        _markdown(fence_format).convert(FENCE.replace('exec="on"', 'exec="on" session="s"'))


def test_a_snippet_s_source_tab_is_found_to_be_left_out_of_search():
    """``figures.py`` marks the Source tab's code (``adapter.SOURCE_CODE``), behind the output,
    ``data-search-exclude``: the output and the snippet's name, on the tab, stay in the index."""
    from sitebuild.figures import themed_figures

    def fence_format(source, language, css_class, options, md, **kwargs):
        return adapter.render(source, options, md, lambda code, filename: "<p>out</p>")

    html = _markdown(fence_format).convert(FENCE)
    assert len(adapter.SOURCE_CODE.findall(html)) == 1, (
        f"{VERSION}: the Source tab is no longer written as adapter.SOURCE_CODE expects:\n{html}")
    marked = themed_figures(html)[0]
    assert marked.count("data-search-exclude") == 1 and marked.index("<p>out</p>") < marked.index("data-search")
