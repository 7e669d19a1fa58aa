"""Preview one snippet's figure or table, in light and dark, without building the site.

    python -m sitebuild.preview snippets/derivation/score_std.py

builds a one-page site around that snippet with the real configuration (the same hooks,
extensions, theme and CSS, so the output looks exactly as on its page), then writes
``preview/<page>-<name>.html``: the output twice, side by side on a wide screen (stacked
on a narrow one), in the light and the dark scheme, with the site's stylesheets (the
one-page site is kept in ``preview/site/``, where ``scripts/screenshots.py --site
preview/site`` shoots it). Open it in a browser. The one page is named after the page
that includes the snippet (``docs/derivation.md`` for ``snippets/derivation/...``), so a
failing snippet is reported as the build reports it: file, line, that page, traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import posixpath
import re
import shutil
import sys
import tempfile
from pathlib import Path

from sdpa import env
from sitebuild.fences import executed_fences

REPO = Path(__file__).resolve().parents[1]
SNIPPETS = REPO / "snippets"
DOCS = REPO / "docs"
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)"')
DOWNLOAD = re.compile(r'href="(figures/[^"]+)"')
# Attributes that name an id: the dark copy's are renamed so the two copies stay apart.
ID_REFERENCE = re.compile(r'\b(id|for|name|aria-labelledby|aria-describedby)="([^"]+)"|(href="#|url\(#)([^")]+)')

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Preview: {title}</title>
{stylesheets}
<style>
  /* Light and dark side by side, each half the window; stacked below 60em (960 px). */
  body {{ margin: 0; display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); }}
  @media (max-width: 60em) {{ body {{ grid-template-columns: minmax(0, 1fr); }} }}
  .sdpa-preview {{ min-width: 0; padding: 1rem 1.5rem;
                   background: var(--md-default-bg-color); color: var(--md-typeset-color); }}
</style>
</head>
<body>
<main class="sdpa-preview md-typeset" data-md-color-scheme="default" data-md-color-primary="indigo"
      data-md-color-accent="indigo">
<p><code>{title}</code>, light</p>
{light}
</main>
<main class="sdpa-preview md-typeset" data-md-color-scheme="slate" data-md-color-primary="indigo"
      data-md-color-accent="light-blue">
<p><code>{title}</code>, dark</p>
{dark}
</main>
</body>
</html>
"""


def _renamed(html: str, prefix: str) -> str:
    def rename(match: re.Match) -> str:
        if match.group(1):
            return f'{match.group(1)}="{prefix}{match.group(2)}"'
        return f"{match.group(3)}{prefix}{match.group(4)}"

    return ID_REFERENCE.sub(rename, html)


def including_page(snippet: str, docs: Path = DOCS) -> str:
    """The page under ``docs`` whose executed fences include ``snippet`` (``<page>/<name>.py``);
    for a snippet no page includes yet, the page its folder belongs to (``<page>.md``)."""
    for page in sorted(docs.rglob("*.md")):
        if any(path == snippet for fence in executed_fences(page.read_text()) for _, path in fence.includes):
            return page.relative_to(docs).as_posix()
    return f"{snippet.split('/')[0]}.md"


def page_folder(page: str) -> str:
    """Where a page's HTML lands in the site (``use_directory_urls``): ``derivation/``, or ``""``."""
    stem = page.removesuffix(".md")
    return "" if stem == "index" else stem.removesuffix("/index") + "/"


def build_one_page(snippet: str, site: Path, page: str) -> str:
    """Build a site whose only page, named ``page`` (``derivation.md``), runs ``snippet``
    (``<page>/<name>.py``); return that page's HTML."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(DOCS / "assets", docs / "assets")
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text(
            f'# Preview\n\n```python exec="on" source="tabbed-right" title="snippets/{snippet}"\n'
            f'--8<-- "{snippet}"\n```\n'
        )
        config = load_config(str(REPO / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(site),
                             nav=[{"Preview": page}])
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    return (site / page_folder(page) / "index.html").read_text()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitebuild.preview", description=__doc__.splitlines()[0])
    parser.add_argument("snippet", type=Path, help="snippets/<page>/<name>.py")
    parser.add_argument("--out", type=Path, default=REPO / "preview", help="folder to write into (default: preview/)")
    args = parser.parse_args(argv)
    snippet = args.snippet.resolve()
    if not snippet.is_file() or not snippet.is_relative_to(SNIPPETS):
        parser.error(f"{args.snippet}: not a file under snippets/")
    name = snippet.relative_to(SNIPPETS).as_posix()
    out = args.out.resolve()
    env.export(NO_MKDOCS_2_WARNING="1")
    logging.basicConfig(format="%(levelname)-8s-  %(message)s", level=logging.WARNING)
    cwd, source = Path.cwd(), including_page(name)
    os.chdir(REPO)  # mkdocs.yml's paths (hooks, snippet folders) are relative to the repository
    try:
        page = build_one_page(name, out / "site", source)
    except Exception as error:  # the build's own message names the snippet's file, line and page
        print(f"preview failed: {error}", file=sys.stderr)
        return 1
    finally:
        os.chdir(cwd)

    def from_here(href: str) -> str:  # a link of the page, from preview/ rather than its folder
        return posixpath.normpath(posixpath.join("site", page_folder(source), href))

    article = ARTICLE.search(page).group(1)
    article = re.sub(r"<h1\b.*?</h1>", "", article, count=1, flags=re.S)
    article = DOWNLOAD.sub(lambda m: f'href="{from_here(m.group(1))}"', article)  # the figures' SVG and CSV
    stylesheets = "\n".join(f'<link rel="stylesheet" href="{from_here(href)}">' for href in STYLESHEET.findall(page))
    target = out / (name.removesuffix(".py").replace("/", "-") + ".html")
    target.write_text(PAGE.format(title=f"snippets/{name}", stylesheets=stylesheets,
                                  light=article, dark=_renamed(article, "dark-")))
    print(f"wrote {target.relative_to(cwd) if target.is_relative_to(cwd) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
