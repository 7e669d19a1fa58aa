"""Save a screenshot of every page, light and dark, desktop and phone, into screenshots/.

Not a test: it lets reviewers look at the site as readers see it. It builds the site
(or takes an already built one with --site), serves it on 127.0.0.1 and drives the
system's headless Chromium (Debian package ``chromium``) through Playwright. It also
prints the size of every built HTML page.

    python scripts/screenshots.py                  # build, then shoot every page
    python scripts/screenshots.py --site /tmp/site # shoot an existing build
    python scripts/screenshots.py --pages derivation.md --widths 375
    python scripts/screenshots.py --figure score-distribution   # one figure, both schemes
    python scripts/screenshots.py --site preview/site           # the page a preview built

With ``--site``, the pages that site holds are shot (a preview's one-page site holds
one); a page asked for with ``--pages`` that it does not hold is an error.

Files are named ``<page>-<scheme>-<width>.png`` (``home`` for the front page), or
``fig-<name>-<scheme>-<width>.png`` for one figure (the element ``#fig-<name>``, found on
whichever page has it); the folder is git-ignored.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO), str(REPO / "snippets")]

from browser_support import SCHEMES, launch, nav_pages, page_file, page_url, serve  # noqa: E402
from sdpa import env  # noqa: E402


def build(into: Path) -> None:
    environment = env.environment({"NO_MKDOCS_2_WARNING": "1", "PYTHONHASHSEED": "0"})
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(into)], cwd=REPO, env=environment,
                   check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--pages", nargs="*", help="page sources as in the nav (default: every page)")
    parser.add_argument("--widths", nargs="*", type=int, default=[1280, 375])
    parser.add_argument("--viewport-only", action="store_true", help="the first screen, not the full page")
    parser.add_argument("--figure", help="shoot only this figure (its name, as in id=\"fig-<name>\")")
    args = parser.parse_args()
    element = f"fig-{args.figure.removeprefix('fig-')}" if args.figure else None

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            build(site)
        pages = [p for p in (args.pages or nav_pages()) if page_file(site, p).is_file()]
        missing = sorted(set(args.pages or []) - set(pages))
        if missing:
            sys.exit(f"not in {site}: {', '.join(missing)}")
        if not pages:
            sys.exit(f"no page of the nav is built in {site}")
        if element:
            pages = [p for p in pages if f'id="{element}"' in page_file(site, p).read_text()]
            if not pages:
                sys.exit(f"no page has a figure with id={element!r}")
        print("built HTML pages (bytes):")
        for source in pages:
            print(f"  {page_file(site, source).stat().st_size:>9,}  {page_url(source) or '/'}")
        args.out.mkdir(parents=True, exist_ok=True)
        with serve(site) as base, sync_playwright() as playwright:
            browser = launch(playwright)
            for source in pages:
                name = page_url(source).strip("/").replace("/", "-") or "home"
                for scheme in SCHEMES:
                    for width in args.widths:
                        context = browser.new_context(
                            color_scheme=scheme, viewport={"width": width, "height": 900}, reduced_motion="reduce"
                        )
                        page = context.new_page()
                        page.goto(base + page_url(source), wait_until="networkidle")
                        if element:
                            path = args.out / f"{element}-{scheme}-{width}.png"
                            page.locator(f"#{element}").screenshot(path=str(path))
                        else:
                            path = args.out / f"{name}-{scheme}-{width}.png"
                            page.screenshot(path=str(path), full_page=not args.viewport_only)
                        context.close()
                        print(f"saved {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
            browser.close()


if __name__ == "__main__":
    main()
