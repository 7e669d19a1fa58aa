"""Cite this site: CITATION.cff, the home page's BibTeX, and a BibTeX entry for every
work on the References page."""

from __future__ import annotations

import re

import yaml

from conftest import DOCS, REPO

ENTRY = re.compile(r"^@(\w+)\{([^,\s]+),\n(.*?)^\}\n", re.M | re.S)
FIELD = re.compile(r"^\s+(\w+)\s*=\s*\{(.*)\},?$", re.M)


def entries(path):
    text = path.read_text()
    found = ENTRY.findall(text)
    assert len(found) == len(re.findall(r"^@", text, re.M)), f"{path.name}: an entry that does not parse"
    parsed = {}
    for kind, key, body in found:
        assert key not in parsed, f"{path.name}: key {key} twice"
        fields = dict(FIELD.findall(body))
        assert body.count("{") == body.count("}"), f"{path.name}: {key} has unbalanced braces"
        assert {"title", "author", "url"} <= set(fields) or kind == "misc" and "howpublished" in fields, key
        parsed[key] = fields
    return parsed


def test_citation_cff_and_the_site_bibtex_agree():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["message"] and cff["authors"]
    (site,) = entries(DOCS / "cite.bib").values()
    assert cff["title"].startswith("Why attention divides by") and site["title"].startswith("Why attention divides by")
    assert site["year"] == str(cff["date-released"])[:4]
    assert site["author"] == "{" + cff["authors"][0]["name"] + "}"


def test_the_home_page_shows_the_citation(built_site):
    page = (built_site / "index.html").read_text()
    assert 'id="cite-this-site"' in page and "why_attention_divides_2026" in page


def test_every_work_on_the_references_page_has_a_bibtex_entry():
    page = (DOCS / "references.md").read_text()
    bib = entries(DOCS / "references.bib")
    cited = set(re.findall(r"arxiv\.org/abs/(\d{4}\.\d{4,5})", page))
    assert cited == {fields["eprint"] for fields in bib.values() if "eprint" in fields}
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| :--")
            and not line.startswith(("| reference |", "| code |", "| page |"))]
    assert len(rows) == len(bib), "one entry per row of the References tables"
    urls = " ".join(f"{f['url']} {f.get('note', '')}" for f in bib.values())
    for row in rows:
        link_column = row.split(" | ")[1]
        for url in re.findall(r"\]\((https?://[^)]+)\)", link_column):
            assert url in urls, f"no BibTeX entry holds {url}"


def test_the_references_page_offers_the_bibtex(built_site):
    page = (built_site / "references" / "index.html").read_text()
    assert 'href="../references.bib"' in page and (built_site / "references.bib").is_file()
    shown = re.findall(r"@(?:misc|inproceedings)\b", re.sub(r"<[^>]+>", "", page))
    assert len(shown) == len(entries(DOCS / "references.bib"))
