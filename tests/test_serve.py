"""``mkdocs serve`` remembers pure build steps across rebuilds: the output stays the same."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest

from sitebuild import serve

CODE = "```python\nimport torch\n\nx = torch.ones(3) * 2\n```\n\n```python title=\"a.py\"\ny = 1\n```\n"
EXTENSIONS = ["pymdownx.highlight", "pymdownx.superfences"]


def test_remembered_highlighting_gives_the_same_html(monkeypatch):
    from pymdownx.highlight import Highlight

    fresh = markdown.markdown(CODE, extensions=EXTENSIONS)
    monkeypatch.setattr(Highlight, "highlight", Highlight.highlight)  # put back after the test
    serve.remember_highlighting()
    assert [markdown.markdown(CODE, extensions=EXTENSIONS) for _ in range(2)] == [fresh, fresh]


class Page:
    def __init__(self, content: str, title: str = "A page"):
        self.url, self.title, self.meta, self.toc, self.content = "a/", title, {}, [], content


@pytest.mark.parametrize("changed", ["content", "title"])
def test_remembered_search_entries_follow_the_page(monkeypatch, changed):
    from material.plugins.search.plugin import SearchIndex

    monkeypatch.setattr(SearchIndex, "add_entry_from_context", SearchIndex.add_entry_from_context)
    html = "<h2 id='one'>One</h2><p>first words</p><h2 id='two'>Two</h2><p>second words</p>"
    plain = SearchIndex()
    plain.add_entry_from_context(Page(html))
    serve.remember_search_entries()
    again = [SearchIndex() for _ in range(2)]
    for index in again:
        index.add_entry_from_context(Page(html))
    assert again[0].entries == again[1].entries == plain.entries
    other = SearchIndex()
    other.add_entry_from_context(Page(html.replace("first", "other")) if changed == "content"
                                 else Page(html, title="Another"))
    other_plain = SearchIndex.__dict__["add_entry_from_context"].__wrapped__
    expected = SearchIndex()
    other_plain(expected, Page(html.replace("first", "other")) if changed == "content" else Page(html, "Another"))
    assert other.entries == expected.entries


def test_remembered_theme_files_are_the_same_list_and_the_project_folder_is_read_anew(monkeypatch, tmp_path):
    """Material's files are walked once; a template added to the project's own theme folder
    while serving is still listed."""
    import material
    from jinja2 import FileSystemLoader

    installed = str(Path(material.__file__).parent / "templates")
    loader = FileSystemLoader([str(tmp_path), installed])
    fresh = loader.list_templates()
    monkeypatch.setattr(FileSystemLoader, "list_templates", FileSystemLoader.list_templates)
    serve.remember_installed_theme_files()
    assert loader.list_templates() == fresh
    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "added.html").write_text("")
    assert loader.list_templates() == sorted({*fresh, "partials/added.html"})


def test_the_glossary_as_one_block_per_definition_gives_the_same_html():
    """The glossary's definitions reach ``abbr`` one block each (fast); joined into one
    block, as ``auto_append`` gives them, every page's HTML is the same."""
    from markdown.preprocessors import Preprocessor

    from sitebuild.glossary import GlossaryExtension

    class OneBlock(Preprocessor):  # after the glossary's preprocessor: the blank lines between definitions go
        def run(self, lines):
            def between(i):
                return 0 < i < len(lines) - 1 and lines[i - 1].startswith("*[") and lines[i + 1].startswith("*[")
            joined = [line for i, line in enumerate(lines) if line or not between(i)]
            assert len(joined) < len(lines) - 10
            return joined

    class Joined(GlossaryExtension):
        def extendMarkdown(self, md):  # noqa: N802
            super().extendMarkdown(md)
            md.preprocessors.register(OneBlock(md), "one_block", 30.5)

    glossary = (Path(__file__).resolve().parents[1] / "includes" / "glossary.md").read_text()
    text = ("# Logits and softmax\n\nThe logits of a softmax, at a temperature, and *saturation*.\n\n"
            "- a list of logits\n- entropy\n\n" + glossary)
    extensions = ["abbr", "attr_list", "def_list", "footnotes", "md_in_html", "tables", "toc", "admonition"]
    fast = markdown.markdown(text, extensions=[*extensions, GlossaryExtension()])
    slow = markdown.markdown(text, extensions=[*extensions, Joined()])
    assert "<abbr" in fast and "*[" not in fast
    assert fast == slow


@pytest.mark.parametrize("html", [
    '<p id="a">x</p><span data-id="b"></span><div xid="c" id="d"></div>', 'id="" id="e" _id="f" é id="g"',
    'xid="a id="b"', 'id="unclosed', '<svg id="fig-1"><path id="p1"/></svg>id="٣" ٣id="h"', ""])
def test_the_ids_of_a_page_are_the_regexs(html):
    """``markup.ids`` (str.find) finds what ``\\bid="([^"]+)"`` found, on odd input too."""
    import re

    from sitebuild.markup import ids

    assert ids(html) == re.findall(r'\bid="([^"]+)"', html)


@pytest.mark.parametrize("html", ["<h2 id='one'>One</h2><p>words</p>",
                                  "<h2 id='one'>One</h2><p data-search-exclude=\"\" data-search-boost=\"2\">words</p>"])
def test_the_search_plugins_page_step_without_its_regex_gives_the_same_page(monkeypatch, html):
    """A page with no ``data-search-`` text skips Material's regex: the same HTML, the same entries."""
    from types import SimpleNamespace

    from material.plugins.search.plugin import SearchIndex, SearchPlugin

    monkeypatch.setattr(SearchPlugin, "on_page_context", SearchPlugin.on_page_context)
    monkeypatch.setattr(SearchIndex, "add_entry_from_context", SearchIndex.add_entry_from_context)

    def run():
        plugin = SimpleNamespace(config=SimpleNamespace(enabled=True), search_index=SearchIndex())
        page = Page(html)
        SearchPlugin.on_page_context(plugin, {}, page=page, config={}, nav=None)
        return page.content, plugin.search_index.entries

    plain = run()
    serve.search_attributes_fast()
    assert run() == plain


MATH_PAGE = ("Let $q \\cdot k$ be a logit.\n\n$$\n\\begin{equation}\\operatorname{Var}(q \\cdot k) = d_k"
             " \\label{eq:var}\\end{equation}\n$$\n\nSee $\\eqref{eq:var}$ and $\\sqrt{d_k}$.\n")
MATH_EXTENSIONS = ["pymdownx.arithmatex"]
MATH_CONFIGS = {"pymdownx.arithmatex": {"generic": True}}


def test_remembered_math_gives_the_same_html_and_a_bad_formula_fails_every_time(monkeypatch):
    from sitebuild import math

    def convert(text):
        return markdown.markdown(text, extensions=[*MATH_EXTENSIONS, math.MathMLExtension()],
                                 extension_configs=MATH_CONFIGS)

    fresh, other = convert(MATH_PAGE), convert(MATH_PAGE.replace("d_k", "d_v"))
    assert "<math" in fresh and fresh != other
    monkeypatch.setattr(math._MathML, "run", math._MathML.run)
    rendered = []
    render = math.render_math
    monkeypatch.setattr(math, "render_math", lambda text: rendered.append(text) or render(text))
    serve.remember_math()
    assert [convert(MATH_PAGE), convert(MATH_PAGE.replace("d_k", "d_v")), convert(MATH_PAGE)] == [fresh, other, fresh]
    assert len(rendered) == 2  # the third is remembered
    for _ in range(2):
        with pytest.raises(math.MathError, match="frac"):
            convert("A bad one: $\\frac{1}$.\n")
    assert len(rendered) == 4


def test_the_figures_of_a_page_are_the_regexs():
    """``figures._figures`` (str.find) finds what ``FIGURE.finditer`` found, on odd input too."""
    import random

    from sitebuild import figures

    parts = [figures._FIGURE_OPEN, "abc", "-9", '">', "</figure>", "<figure>", " ", "x", "é", '"', "A"]
    rnd = random.Random(0)
    for _ in range(20000):
        html = "".join(rnd.choice(parts) for _ in range(rnd.randrange(0, 12)))
        assert list(figures._figures(html)) == [(m.start(), m.end(), m["name"], m["body"])
                                                for m in figures.FIGURE.finditer(html)], html


#: Every third-party function the build wraps or replaces (sitebuild/serve.py, notebook.py),
#: with the parameters the wrapper passes on or reads by name.
PATCHED = [
    ("material.plugins.search.plugin", "SearchIndex.add_entry_from_context", {"self", "page"}),
    ("material.plugins.search.plugin", "SearchPlugin.on_page_context", {"self", "context", "page", "config", "nav"}),
    ("pymdownx.highlight", "Highlight.highlight", {"self", "src", "language", "title"}),
    ("mkdocs_jupyter.plugin", "Plugin.should_include", {"self", "file"}),
    ("mkdocs_jupyter.convert", "nb2html", {"nb_path"}),
    ("mkdocs.theme", "Theme.get_env", {"self"}),
    ("jinja2", "FileSystemLoader.list_templates", {"self"}),
]


@pytest.mark.parametrize(("module", "name", "parameters"), PATCHED, ids=[name for _, name, _ in PATCHED])
def test_every_third_party_function_the_build_patches_is_there(module, name, parameters):
    import importlib
    import inspect
    from importlib.metadata import version

    package = module.split(".")[0].replace("_", "-").replace("material", "mkdocs-material")
    package = {"pymdownx": "pymdown-extensions"}.get(package, package)
    found = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    assert callable(found), f"{package} {version(package)} has no {module}.{name}, which sitebuild patches"
    missing = parameters - set(inspect.signature(inspect.unwrap(found)).parameters)
    assert not missing, f"{package} {version(package)}: {module}.{name} no longer takes {sorted(missing)}"


def test_the_server_looks_for_edits_as_often_as_asked(tmp_path):
    """:func:`sitebuild.serve.poll_often` sets the interval of the live-reload server's
    watchdog observer (and its emitters') through private attributes: their public
    ``timeout`` must follow."""
    from mkdocs.livereload import LiveReloadServer
    from watchdog.events import FileSystemEventHandler

    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    try:
        server.observer.schedule(FileSystemEventHandler(), str(tmp_path))
        serve.poll_often(server, 0.1)
        assert server.observer.timeout == 0.1, "mkdocs' observer no longer takes its interval from _timeout"
        assert [emitter.timeout for emitter in server.observer.emitters] == [0.1], "nor its emitters"
    finally:
        server.server_close()
