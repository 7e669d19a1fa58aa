"""References complete (issue 38): every work a page cites has a row on the References page
that names the page, and every page a row names cites the work.

A page cites (its Markdown, with the verdict sections it includes written out):

- an arXiv id: a link to arxiv.org, or ``arXiv 1706.03762`` / ``arXiv:1706.03762`` in the text;
- a web page: any other external link (a code base, a file in one, a documentation page);
- a code file of another project: a file name in code font (```modeling_t5.py```,
  ```config_671B.json```) that is not a file of this repository;
- a paper by its authors: ``Vaswani et al. 2017``, ``Glorot and Bengio 2010``, or the
  first author and year of a row with one author or a team (``Lingle 2024``,
  ``Gemma Team 2024``).

A row holds the arXiv ids and links of its link column, the file names in code font and the
authors and year of its first column, and names pages by links in its last column. A link
matches a row's link when one is the other or lies inside it (a file of a repository the row
links). A page's citation with no row naming the page fails; so does a row naming a page that
cites none of the row's works.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from conftest import DOCS, REPO

REFERENCES = DOCS / "references.md"
INCLUDE = re.compile(r'^[ \t]*--8<-- "([^"]+\.md):([\w-]+)"[ \t]*$', re.M)
ARXIV = re.compile(r"arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})|arXiv[ :](\d{4}\.\d{4,5})")
URL = re.compile(r"https?://[^\s)<>\"'`]+")
CODE_FILE = re.compile(r"`([\w./-]+\.(?:py|json|ya?ml|toml|cc|cpp|h|jl))`")
AUTHORS = re.compile(r"\b([A-Z][\w'-]+) (?:et al\.,?|and [A-Z][\w'-]+,?) \(?((?:19|20)\d\d)\b")


def page_name(path: Path) -> str:
    return path.relative_to(DOCS).as_posix()


def pages() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if p != REFERENCES] + [DOCS / "lab.py"]


def section(name: str, part: str) -> str:
    """An included section's text ('' where it does not exist yet: the build reports that)."""
    path = REPO / "includes" / name
    text = path.read_text() if path.is_file() else ""
    match = re.search(rf"--8<-- \[start:{re.escape(part)}\]\n(.*?)--8<-- \[end:{re.escape(part)}\]", text, re.S)
    return match.group(1) if match else ""


def expanded(path: Path) -> str:
    """A page's text with the verdict sections it includes written out."""
    return INCLUDE.sub(lambda m: section(m.group(1), m.group(2)), path.read_text())


def normal(url: str) -> str:
    """A link without its anchor, trailing punctuation or slash; GitHub's blob and tree alike."""
    url = re.sub(r"(\.git|[.,;:])$", "", url.split("#")[0]).rstrip("/")
    return re.sub(r"(github\.com/[^/]+/[^/]+)/(?:blob|tree)/", r"\1/-/", url)


def ours(name: str) -> bool:
    """A file of this repository (``snippets/sdpa/plane.py``, ``plane.py``, ``mkdocs.yml``)."""
    return any((base / name).exists() for base in (REPO, REPO / "snippets", REPO / "snippets" / "sdpa", DOCS))


class Row:
    def __init__(self, line: str):
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        self.line, first, links, used = line, cells[0], cells[1], cells[-1]
        self.pages = set(re.findall(r"\]\(([\w./-]+\.(?:md|py))(?:#[^)]*)?\)", used))
        self.arxiv = {a or b for a, b in ARXIV.findall(links)}
        self.urls = {normal(u) for u in URL.findall(links) if "arxiv.org" not in u}
        self.files = {Path(name).name for name in CODE_FILE.findall(first)} | {
            Path(u).name for u in self.urls if re.search(r"/[\w.-]+\.\w+$", u)}
        lead = re.match(r"([A-Z][\w'-]+(?: et al\.| and [A-Z][\w'-]+| Team)?) ((?:19|20)\d\d)\b", first)
        self.author = (lead.group(1).split()[0], lead.group(2)) if lead else None
        self.name = f"{lead.group(1)} {lead.group(2)}" if lead else None


def rows() -> list[Row]:
    found = []
    for line in REFERENCES.read_text().splitlines():
        if line.startswith("| ") and not line.startswith(("| :--", "| reference |", "| code |", "| page |")):
            found.append(Row(line))
    return found


def citations(path: Path, table: list[Row]) -> dict[str, set[str]]:
    """What a page cites, by kind: {'arxiv': ids, 'url': links, 'file': names, 'author': keys}."""
    text = expanded(path)
    cited: dict[str, set[str]] = collections.defaultdict(set)
    cited["arxiv"] = {a or b for a, b in ARXIV.findall(text)}
    cited["url"] = {normal(u) for u in URL.findall(text) if "arxiv.org" not in u}
    cited["file"] = {Path(name).name for name in CODE_FILE.findall(text) if not ours(name)}
    cited["author"] = {f"{surname} {year}" for surname, year in AUTHORS.findall(text)}
    for row in table:  # one author or a team: the row's own name and year
        if row.name and re.search(re.escape(row.name).replace(r"\ ", r"[\s,]+\(?"), text):
            cited["author"].add(f"{row.author[0]} {row.author[1]}")
    return cited


def covers(row: Row, kind: str, key: str) -> bool:
    if kind == "arxiv":
        return key in row.arxiv
    if kind == "url":
        return any(key == u or key.startswith(u + "/") or u.startswith(key + "/") for u in row.urls)
    if kind == "file":
        return key in row.files
    return row.author is not None and key == f"{row.author[0]} {row.author[1]}"


#: Links that are not citations: the site's own parts and its tools' homes.
NOT_CITATIONS = ("https://github.com/squidfunk", "https://squidfunk.github.io")


@pytest.mark.parametrize("path", pages(), ids=page_name)
def test_every_work_a_page_cites_has_a_row_naming_the_page(path):
    table = rows()
    missing = []
    for kind, keys in citations(path, table).items():
        for key in sorted(keys):
            if kind == "url" and key.startswith(NOT_CITATIONS):
                continue
            matching = [row for row in table if covers(row, kind, key)]
            if not any(page_name(path) in row.pages for row in matching):
                missing.append(f"{kind} {key}" + ("" if matching else " (no row at all)"))
    assert not missing, f"{page_name(path)} cites, with no references row naming it: {missing}"


def test_every_page_a_row_names_cites_the_work():
    table = rows()
    cited = {page_name(p): citations(p, table) for p in pages()}
    wrong = []
    for row in table:
        for page in sorted(row.pages):
            assert page in cited, f"a row names {page}, which is not a page"
            if not any(covers(row, kind, key) for kind, keys in cited[page].items() for key in keys):
                wrong.append(f"{row.line.split(' | ')[0][2:60]}... names {page}")
    assert not wrong, "rows that name a page not citing them:\n" + "\n".join(wrong)


def test_the_reading_of_citations():
    row = Row("| Britz et al. 2017, \"Massive\" | [arXiv 1703.03906](https://arxiv.org/abs/1703.03906) "
              "| [failure modes](failure-modes.md) |")
    assert row.arxiv == {"1703.03906"} and row.author == ("Britz", "2017") and row.pages == {"failure-modes.md"}
    code = Row("| Hugging Face T5 (`modeling_t5.py`) | [huggingface/transformers](https://github.com/"
               "huggingface/transformers/blob/main/src/transformers/models/t5/modeling_t5.py) | "
               "[practice](practice.md) |")
    assert code.files == {"modeling_t5.py"}
    assert covers(code, "url", "https://github.com/huggingface/transformers")
    assert not covers(code, "url", "https://github.com/huggingface/transformers-extra")
    assert AUTHORS.findall("as Glorot and Bengio (2010) and He et al. 2015 did") == [
        ("Glorot", "2010"), ("He", "2015")]
    assert not ours("modeling_t5.py") and ours("snippets/sdpa/plane.py")
