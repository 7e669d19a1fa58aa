"""The Code section: mkdocstrings' page per library module, each definition with its source,
and the links under each snippet to the library code it uses (``sitebuild/code_pages.py``)."""

from __future__ import annotations

import ast
import html
import html.parser
import re
import shutil

import pytest
import yaml

from browser_support import _AnyTagLoader
from conftest import DOCS, SNIPPETS, page_includes
from sitebuild.code_pages import Library, page

MODULES = sorted((SNIPPETS / "sdpa").rglob("*.py"))


def _name(module_file) -> str:
    return ".".join(module_file.relative_to(SNIPPETS).with_suffix("").parts).removesuffix(".__init__")


def _numbered_lines(page_html: str) -> dict[int, str]:
    """Every line the page's numbered code blocks show, by its line number."""
    shown = {}
    for numbers, code in re.findall(r'<td class="linenos">(.*?)</td><td class="code">(.*?)</td>', page_html, re.S):
        text = html.unescape(re.sub(r"<[^>]+>", "", code)).split("\n")
        for number, line in zip((int(n) for n in re.findall(r">\s*(\d+)</span>", numbers)), text):
            shown[number] = line
    return shown


def test_every_library_module_has_its_page_in_the_nav():
    """A module's page is ``docs/code/<module>.md`` holding ``::: sdpa.<module>``, listed under
    the nav's Code section (a new module fails here, naming the page to write)."""
    nav = yaml.load((SNIPPETS.parent / "mkdocs.yml").read_text(), Loader=_AnyTagLoader)["nav"]
    listed = next(entry["Code"] for entry in nav if isinstance(entry, dict) and "Code" in entry)
    pages = {page(_name(module)): _name(module) for module in MODULES}
    missing = [f"docs/{path} (with the line '::: {name}')" for path, name in pages.items()
               if f"::: {name}\n" not in ((DOCS / path).read_text() if (DOCS / path).is_file() else "")]
    assert not missing, f"library modules without their Code page: {missing}"
    assert {page: name for entry in listed for name, page in entry.items()} == pages, (
        "mkdocs.yml's Code section lists every docs/code/ page, no other, under its module's name")


def test_every_definition_shows_its_source_with_the_file_s_line_numbers(built_site):
    for module in MODULES:
        name = _name(module)
        built = (built_site / page(name).removesuffix(".md").removesuffix("index")).joinpath("index.html")
        shown, lines = _numbered_lines(built.read_text()), module.read_text().splitlines()
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert f'id="{name}.{node.name}"' in built.read_text(), (module, node.name)
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                assert all(shown.get(n) == lines[n - 1] for n in range(first, node.end_lineno + 1)
                           if lines[n - 1].strip()), (module, node.name)


def test_snippet_pages_link_the_library_code_their_snippets_use(built_site):
    page_html = (built_site / "derivation" / "index.html").read_text()
    uses = "".join(re.findall(r'<p class="sdpa-uses">(.*?)</p>', page_html, re.S))
    assert uses, "no line of library links under the derivation page's snippets"
    assert re.search(r'<a [^>]*href="\.\./code/attention/#sdpa\.attention\.scores"><code>scores</code></a>', uses)


def test_names_resolve_to_their_definitions_through_reexports():
    library = Library([SNIPPETS])
    source = "import sdpa\nfrom sdpa.attention import scores\n\nsdpa.seed(0)\nsdpa.Figure\nsdpa.attention.entropy\n"
    assert dict(library.uses(source)) == {
        "scores": "sdpa.attention.scores",
        "sdpa.seed": "sdpa.runtime.seed",
        "sdpa.Figure": "sdpa.figures.Figure",
        "sdpa.attention.entropy": "sdpa.attention.entropy",
    }
    assert "[`scores`][sdpa.attention.scores]" in library.uses_line(source)


def test_a_new_module_is_read_without_any_edit(tmp_path):
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS / "sdpa", copy / "sdpa", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "sdpa" / "novel.py").write_text(
        '"""A module added later."""\n\nimport math\n\n# two constants\nA = 1\nB = 2\n\n\n'
        "@staticmethod\ndef fresh():\n    return A\n"
    )
    library = Library([copy])
    assert page("sdpa.novel") == "code/novel.md"
    assert library.uses("from sdpa.novel import B, fresh\n") == [("B", "sdpa.novel.B"), ("fresh", "sdpa.novel.fresh")]


class _PrimaryNav(html.parser.HTMLParser):
    """The top-level entries of a page's primary navigation: [title, nested, open] each."""

    def __init__(self, page: str):
        super().__init__()
        self.entries: list[list] = []
        self.depth = 0  # <ul> depth inside the primary nav (1: its top-level list)
        self.inside = self.title = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "nav" and "md-nav--primary" in classes:
            self.inside = True
        elif self.inside and tag == "ul":
            self.depth += 1
        elif self.inside and self.depth == 1 and tag == "li":
            self.entries.append(["", False, False])
        elif self.inside and self.depth == 1 and tag == "input" and attrs.get("id", "").startswith("__nav_"):
            self.entries[-1][1:] = [True, "checked" in attrs]
        elif self.inside and self.depth == 1 and tag == "span" and "md-ellipsis" in classes:
            self.title = not self.entries[-1][0]

    def handle_endtag(self, tag):
        if self.inside and tag == "ul":
            self.depth -= 1
            self.inside = self.depth > 0
        elif tag == "span":
            self.title = False

    def handle_data(self, data):
        if self.title and data.strip():
            self.entries[-1][0] += data.strip()


def test_the_navigation_lists_the_pages_in_order_and_the_code_as_one_entry(built_site):
    """Every page's sidebar lists mkdocs.yml's entries in its order, each once; the Code
    section is one entry, closed on the other pages and open on its own (issue 30); the
    evidence pages are one section of their own, closed on these pages (issue 38)."""
    nav = yaml.load((SNIPPETS.parent / "mkdocs.yml").read_text(), Loader=_AnyTagLoader)["nav"]
    titles = [next(iter(entry)) for entry in nav]
    for built, code_open in (("index.html", False), ("derivation/index.html", False),
                             ("code/attention/index.html", True)):
        entries = _PrimaryNav((built_site / built).read_text()).entries
        assert len(entries) == len(titles) and all(  # (the notebook's title is its own: "Lab notebook: ...")
            shown.startswith(title) for (shown, _, _), title in zip(entries, titles)), (built, entries)
        assert [(title, opened) for title, nested, opened in entries if nested] == [
            ("Evidence", False), ("Code", code_open)], built


def test_the_library_line_infers_no_loop():
    """The loop that trained a snippet is recorded while it runs (tests/test_store.py), not
    inferred from the names its code reaches: the library line under a snippet that calls a
    study names the study, and no loop."""
    library = Library([SNIPPETS])
    line = library.uses_line("from sdpa.ablation import run_ablation\n\nresult = run_ablation()\n")
    assert line.startswith("Library code used: [`run_ablation`][sdpa.ablation.run_ablation]")
    assert "loop" not in line


@pytest.mark.parametrize("page", ["practice.md", "transfer.md", "tuning.md"])
def test_the_loop_under_a_snippet_is_the_one_its_run_recorded(page, built_site, run_snippet):
    """Under a snippet's output, the loop that trained it is the one an optimiser-step hook
    recorded while it ran (``sdpa.runtime.loops``), linked to its heading here; a snippet
    that stepped no optimiser (the gradients at initialisation; the head-count study, which
    only the full profile runs) shows none."""
    trained = [run_snippet(snippet).trained for snippet in page_includes()[page]]
    stem = page.removesuffix(".md")
    lines = re.findall(r'<p class="sdpa-uses">The loop that trained it: (.*?)</p>',
                       (built_site / stem / "index.html").read_text(), re.S)
    assert len(lines) == sum(map(bool, trained)), (lines, trained)
    assert all('href="../code/training/#sdpa.training.train"' in line for line in lines), lines
