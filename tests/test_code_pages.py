"""The Code section: a page per library module, its source from the real file, and the
links under each snippet to the library code it uses."""

from __future__ import annotations

import html
import html.parser
import re
import shutil

from conftest import SNIPPETS
from sitebuild.code_pages import Library

MODULES = sorted((SNIPPETS / "sdpa").rglob("*.py"))


def _page(site, module_file) -> str:
    stem = module_file.relative_to(SNIPPETS / "sdpa").with_suffix("").as_posix()
    return (site / "code" / ("" if stem == "__init__" else stem) / "index.html").read_text()


def _numbered_lines(page: str) -> dict[int, str]:
    """Every line the page's numbered code blocks show, by its line number."""
    shown = {}
    for numbers, code in re.findall(r'<td class="linenos">(.*?)</td><td class="code">(.*?)</td>', page, re.S):
        text = html.unescape(re.sub(r"<[^>]+>", "", code)).split("\n")
        for number, line in zip((int(n) for n in re.findall(r">\s*(\d+)</span>", numbers)), text):
            shown[number] = line
    return shown


def test_every_library_module_has_a_page_showing_its_whole_file(built_site):
    assert MODULES
    for module in MODULES:
        shown = _numbered_lines(_page(built_site, module))
        lines = module.read_text().splitlines()
        assert {n: line for n, line in shown.items() if line.strip()} == {
            n: line for n, line in enumerate(lines, start=1) if line.strip()}, module


def test_snippet_pages_link_the_library_code_their_snippets_use(built_site):
    page = (built_site / "derivation" / "index.html").read_text()
    uses = re.findall(r'<p class="sdpa-uses">(.*?)</p>', page, re.S)
    assert uses, "no line of library links under the derivation page's snippets"
    assert '<a href="../code/attention/#scores"><code>scores</code></a>' in "".join(uses)


def test_names_resolve_to_their_definitions_through_reexports():
    library = Library([SNIPPETS])
    source = "import sdpa\nfrom sdpa.attention import scores\n\nsdpa.seed(0)\nsdpa.Figure\nsdpa.attention.entropy\n"
    found = {label: (module.name, anchor) for label, module, anchor in library.uses(source)}
    assert found == {
        "scores": ("sdpa.attention", "scores"),
        "sdpa.seed": ("sdpa.runtime", "seed"),
        "sdpa.Figure": ("sdpa.figures", "Figure"),
        "sdpa.attention.entropy": ("sdpa.attention", "entropy"),
    }
    assert "[`scores`](code/attention.md#scores)" in library.uses_line(source, "derivation.md")
    assert "[`scores`](../code/attention.md#scores)" in library.uses_line(source, "guide/page.md")


def test_a_new_module_gets_its_page_without_any_edit(tmp_path):
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS / "sdpa", copy / "sdpa", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "sdpa" / "novel.py").write_text(
        '"""A module added later."""\n\nimport math\n\n# two constants\nA = 1\nB = 2\n\n\n'
        "@staticmethod\ndef fresh():\n    return A\n"
    )
    library = Library([copy])
    novel = library.modules["sdpa.novel"]
    assert novel.page == "code/novel.md"
    assert [(p.start, p.end, p.anchor, p.names) for p in novel.parts] == [
        (1, 4, "", []), (5, 9, "A", ["A", "B"]), (10, 12, "fresh", ["fresh"])]
    assert "[`sdpa.novel`](novel.md) | A module added later. |" in library.index_markdown()
    assert library.uses("from sdpa.novel import B, fresh\n") == [("B", novel, "A"), ("fresh", novel, "fresh")]
    assert '## `fresh` { #fresh }\n\n```python linenums="10"\n--8<-- "sdpa/novel.py:10:12"\n```' in novel.markdown()


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
    import yaml

    from browser_support import _AnyTagLoader

    nav = yaml.load((SNIPPETS.parent / "mkdocs.yml").read_text(), Loader=_AnyTagLoader)["nav"]
    titles = [next(iter(entry)) for entry in nav]
    for page, code_open in (("index.html", False), ("derivation/index.html", False),
                            ("code/attention/index.html", True)):
        entries = _PrimaryNav((built_site / page).read_text()).entries
        assert len(entries) == len(titles) and all(  # (the notebook's title is its own: "Lab notebook: ...")
            shown.startswith(title) for (shown, _, _), title in zip(entries, titles)), (page, entries)
        assert [(title, opened) for title, nested, opened in entries if nested] == [
            ("Evidence", False), ("Code", code_open)], page


def test_a_training_snippet_links_the_loop_that_ran_it(tmp_path):
    """A module names its training loops (``__loops__``); a snippet whose library code
    reaches one, a call or a name at a time, links it under its library links, and a
    snippet that trains nothing does not."""
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    training = copy / "sdpa" / "training.py"
    if "__loops__" not in training.read_text():
        training.write_text(training.read_text() + '\n__loops__ = ("train",)\n')
    library = Library([copy])
    trains = library.uses_line("from sdpa.ablation import run_ablation\n\nresult = run_ablation()\n", "page.md")
    assert trains.split("\n")[0].endswith(
        "; the loop that trained it: [`sdpa.training.train`](code/training.md#train)"), trains
    assert "loop" not in library.uses_line("from sdpa.attention import scores\n", "page.md")
