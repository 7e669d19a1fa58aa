"""Preview one snippet's figure or table, in light and dark, without building the site.

    python scripts/preview.py snippets/derivation/score_std.py

builds a one-page site around the snippet with the real configuration (the same hooks,
theme and CSS; its run comes from the store, or goes into it), kept in ``preview/site/``
(``scripts/screenshots.py --site preview/site`` shoots it), and writes
``preview/<page>-<name>.html``: the output in the light and the dark scheme, side by side
on a wide screen. The page is named after the page that includes the snippet, so a
failing snippet is reported as the build reports it: file, line, that page, traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import posixpath
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "snippets")]

from sdpa import env  # noqa: E402
from sitebuild.fences import executed_fences  # noqa: E402

SNIPPETS, DOCS = REPO / "snippets", REPO / "docs"
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
# Attributes that name an id: the dark copy's are renamed so the two copies stay apart.
ID_REFERENCE = re.compile(r'\b(id|for|name|aria-labelledby|aria-describedby)="([^"]+)"|(href="#|url\(#)([^")]+)')

PAGE = Path(__file__).with_name("preview.html")  # light and dark side by side, stacked on a narrow screen


def including_page(snippet: str, docs: Path = DOCS) -> str:
    """The page under ``docs`` whose executed fences include ``snippet`` (``<page>/<name>.py``);
    for a snippet no page includes yet, the page its folder belongs to (``<page>.md``)."""
    for page in sorted(docs.rglob("*.md")):
        if any(path == snippet for fence in executed_fences(page.read_text()) for _, path in fence.includes):
            return page.relative_to(docs).as_posix()
    return f"{snippet.split('/')[0]}.md"


def build_one_page(snippet: str, site: Path, page: str) -> str:
    """Build a site whose only page, named ``page``, runs ``snippet``; return its HTML."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(REPO):  # mkdocs.yml's paths are the checkout's
        docs = Path(tmp) / "docs"
        shutil.copytree(DOCS / "assets", docs / "assets")
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text(f'# Preview\n\n```python exec="on" source="tabbed-right" title="snippets/{snippet}"\n'
                                 f'--8<-- "{snippet}"\n```\n')
        config = load_config(str(REPO / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(site), nav=[{"Preview": page}])
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    stem = page.removesuffix(".md")
    return (site / ("" if stem == "index" else stem) / "index.html").read_text()


def main(argv: list[str] | None = None) -> int | str:
    parser = argparse.ArgumentParser(prog="python scripts/preview.py", description=__doc__.splitlines()[0])
    parser.add_argument("snippet", type=Path, help="snippets/<page>/<name>.py")
    parser.add_argument("--out", type=Path, default=REPO / "preview", help="folder to write into (default: preview/)")
    args = parser.parse_args(argv)
    snippet, out = args.snippet.resolve(), args.out.resolve()
    if not snippet.is_file() or not snippet.is_relative_to(SNIPPETS):
        parser.error(f"{args.snippet}: not a file under snippets/")
    name = snippet.relative_to(SNIPPETS).as_posix()
    env.export(NO_MKDOCS_2_WARNING="1")
    source = including_page(name)
    try:
        page = build_one_page(name, out / "site", source)
    except Exception as error:  # the build's own message names the snippet's file, line and page
        return f"preview failed: {error}"
    folder = posixpath.join("site", source.removesuffix(".md").removesuffix("index"))

    def from_here(match: re.Match) -> str:  # a link of the page, from preview/ rather than its folder
        return f'{match[1]}="{posixpath.normpath(posixpath.join(folder, match[2]))}"'

    article = re.sub(r"<h1\b.*?</h1>", "", ARTICLE.search(page).group(1), count=1, flags=re.S)
    article = re.sub(r'(href)="(figures/[^"]+)"', from_here, article)  # the figures' SVG and CSV
    stylesheets = "\n".join(re.sub(r'(href)="([^"]+)"', from_here, link)
                            for link in re.findall(r'<link rel="stylesheet" href="[^"]+">', page))
    dark = ID_REFERENCE.sub(lambda m: f'{m[1]}="dark-{m[2]}"' if m[1] else f"{m[3]}dark-{m[4]}", article)
    target = out / (name.removesuffix(".py").replace("/", "-") + ".html")
    fields = {"title": f"snippets/{name}", "stylesheets": stylesheets, "light": article, "dark": dark}
    target.write_text(re.sub(r"\{(title|stylesheets|light|dark)\}", lambda m: fields[m[1]], PAGE.read_text()))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
