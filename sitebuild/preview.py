"""Preview one snippet's figure or table, in light and dark, without building the site.

    python -m sitebuild.preview snippets/derivation/score_std.py

builds a one-page site around that snippet with the real configuration (the same hooks,
extensions, theme and CSS, so the output looks exactly as on its page), then writes
``preview/<page>-<name>.html``: the output twice, side by side, in the light and the dark
scheme, with the site's stylesheets (copied to ``preview/site/``). Open it in a browser.
A failing snippet is reported as the build reports it: file, line and traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNIPPETS = REPO / "snippets"
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)"')
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
  body {{ margin: 0; display: flex; flex-flow: row wrap; }}
  .sdpa-preview {{ flex: 1 1 36rem; min-width: 0; padding: 1rem 1.5rem;
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


def build_one_page(snippet: str, site: Path) -> str:
    """Build a site whose only page runs ``snippet`` (``<page>/<name>.py``); return its article."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(REPO / "docs" / "assets", docs / "assets")
        (docs / "index.md").write_text(
            f'# Preview\n\n```python exec="on" source="tabbed-right" title="snippets/{snippet}"\n'
            f'--8<-- "{snippet}"\n```\n'
        )
        config = load_config(str(REPO / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(site),
                             nav=[{"Preview": "index.md"}])
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    return (site / "index.html").read_text()


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
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    logging.basicConfig(format="%(levelname)-8s-  %(message)s", level=logging.WARNING)
    cwd = Path.cwd()
    os.chdir(REPO)  # mkdocs.yml's paths (hooks, snippet folders) are relative to the repository
    try:
        page = build_one_page(name, out / "site")
    except Exception as error:  # the build's own message names the snippet's file and line
        print(f"preview failed: {error}", file=sys.stderr)
        return 1
    finally:
        os.chdir(cwd)
    article = ARTICLE.search(page).group(1)
    article = re.sub(r"<h1\b.*?</h1>", "", article, count=1, flags=re.S)
    article = article.replace('href="figures/', 'href="site/figures/')  # the downloads
    stylesheets = "\n".join(f'<link rel="stylesheet" href="site/{href}">' for href in STYLESHEET.findall(page))
    target = out / (name.removesuffix(".py").replace("/", "-") + ".html")
    target.write_text(PAGE.format(title=f"snippets/{name}", stylesheets=stylesheets,
                                  light=article, dark=_renamed(article, "dark-")))
    print(f"wrote {target.relative_to(cwd) if target.is_relative_to(cwd) else target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
