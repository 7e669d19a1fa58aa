"""The build report, the records the *Build report* page prints, and each page's profile line.

``build-report.json``, beside the site (this build's timings stay out of the pages, which
two builds make byte for byte the same): each snippet's and notebook's page, figures,
device, profile, seconds and whether this build ran it, and the :func:`digests` the site
was made from, which a test of a site built beforehand (``SDPA_BUILT_SITE``) compares with
the checkout's. The page's numbers are the committed records under ``bench/records/``
(``scripts/claims_sweep.py --record``, ``scripts/benchmark.py --full``), written into its
HTML by :class:`RecordsExtension` (a Markdown extension, for any engine):
:func:`records_markdown` (the claim sweeps and the last full build) and :func:`timings_markdown`
(that build's seconds per snippet).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor

from sdpa import env
from sitebuild import markdown_extension
from sitebuild.execute import read_json
from sdpa.style import FIGURE_CLASS, FIGURE_ID_PREFIX

FIGURE_ID = re.compile(rf'<figure class="{re.escape(FIGURE_CLASS)}" id="{re.escape(FIGURE_ID_PREFIX)}([^"]+)"')
RECORDS_DIR = Path(__file__).resolve().parents[1] / "bench" / "records"
#: ``extra: full_build_decides:`` in mkdocs.yml names the page (and anchor) that says what
#: the full build decides; a quick-built page links there from its top.
DECIDES, REPORT = "full_build_decides", "build-report.md"
#: The lines of docs/build-report.md that the records' sentences and the last full build's
#: timings replace.
RECORDS, TIMINGS = "<!-- records -->", "<!-- timings -->"


def entry(page: str, record: dict, ran: bool, snippet: str = "") -> dict:
    """A snippet's (or, without ``snippet``, the notebook's) line of the report, from its
    ``record`` in the store (``ran``: this build's workers wrote it)."""
    found = {"snippet": snippet, "figures": FIGURE_ID.findall(record["output"]),
             "tables": record["output"].count("<table>")} if snippet else {}
    return {"page": page, **found, "seconds": record["seconds"], "ran": ran,
            **{key: record[key] for key in ("device", "torch", "profile")}}


def write(site_dir: str, snippets: list[dict], notebooks: list[dict], digests: dict) -> None:
    total = round(sum(entry["seconds"] for entry in snippets + notebooks), 3)
    report = {"snippets": snippets, "notebooks": notebooks, "total_seconds": total, "digests": digests}
    Path(site_dir, "build-report.json").write_text(json.dumps(report, indent=1))


def digests(config, plan) -> dict:
    """What a site was made from: its snippets' code and run context, and every file the
    build reads (the pages, the snippets and includes, the build's code, ``mkdocs.yml``, the
    records the build report prints: a site built before a record changed is not this one)."""
    digest = hashlib.sha256()
    hash_files(digest, [Path(config.config_file_path), Path(config.docs_dir), Path(__file__).parent, RECORDS_DIR,
                        *(Path(base) for base in config.mdx_configs["pymdownx.snippets"]["base_path"])])
    return {"code": plan.code, "context": dict(env.run_context(plan.device)), "sources": digest.hexdigest()}


def hash_files(digest, roots: list[Path]) -> None:
    """Add to ``digest`` the name and the bytes of every file under ``roots`` (a file stands
    for itself), in order."""
    for root in sorted({root.resolve() for root in roots}):
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(root.parent)}".encode() + b"\0" + path.read_bytes() + b"\0")


def _offsets(offsets: list[int]) -> str:
    """``0–19`` for a run of offsets, else the list."""
    whole = offsets == list(range(offsets[0], offsets[-1] + 1)) and len(offsets) > 2
    return f"{offsets[0]}–{offsets[-1]}" if whole else ", ".join(map(str, offsets))


def records_markdown(folder: Path = RECORDS_DIR) -> str:
    """The build report's sentences on the recorded claim sweeps and the last full build."""
    def swept(s: dict) -> str:
        if "blocks" not in s:  # consecutive offsets share most of their seeds
            return (f"{s['tests']} claim tests swept at {len(s['offsets'])} consecutive seed offsets "
                    f"({_offsets(s['offsets'])}), which share most of their seeds: not independent draws "
                    f"({s['date']}).")
        return (f"{s['tests']} claim tests ({s['claims']:,} recorded claims) certified on "
                f"{len(s['blocks'])} independent seed blocks ({_offsets(s['blocks'])}: every seed moved by a "
                f"multiple of {s['seed_block']:,}, so no two blocks share one), {s['failed']} failing on any, "
                f"{s['under']} with a margin under three standard deviations over the blocks, the smallest "
                f"{s['min_margin']:.1f}; their words were settled on {s['settled_on']}, which the "
                f"certifying blocks do not include ({s['date']}).")

    sweeps, build = read_json(folder / "claims-sweeps.json"), read_json(folder / "full-build.json")
    lines = [f"- The {profile} profile's claims: " + (swept(s) if (s := sweeps.get(profile))
                                                      else "no sweep of them all recorded yet.")
             for profile in env.PROFILES]
    # A profile's claims swept in parts (a page's tests at a time), until a sweep of them all.
    lines += [f"- The {part['profile']} profile's claims of {part['pages']}: {part['tests']} claim tests at "
              f"consecutive seed offsets {_offsets(part['offsets'])} (which share most of their seeds, so "
              f"fewer independent draws than offsets), {part['failed']} failing, " + (
                  f"{part['under']} of {part['claims']:,} recorded claims with a margin under three standard "
                  f"deviations, the smallest {part['min_margin']:.1f}" if len(part["offsets"]) > 1
                  else "no margin yet (it needs two offsets or more)")
              + "".join(f"; {note}" for note in part.get("notes", [])) + f" ({part['date']})."
              for part in read_json(folder / "claims-parts.json").get("parts", [])]
    return "\n".join(lines + [
        f"- The last full build took {build['build_s'] / 60:.1f} minutes ({build['build_s']:,.0f} s) on "
        f"{build['cores']} cores, and its claims, reading its store, {build['claims_s']:,.0f} s more "
        f"({build['date']})." if build else "- No full build has been recorded yet."])


def timings_markdown(folder: Path = RECORDS_DIR) -> str:
    """The last full build's seconds per snippet (and notebook), slowest first, as a table."""
    build = read_json(folder / "full-build.json")
    if not build:
        return "No full build has been recorded yet."
    seconds = sorted(build.get("seconds", {}).items(), key=lambda item: (-item[1], item[0]))
    rows = "".join(f"\n| `{name}` | {value:,.1f} |" for name, value in seconds)
    return (f"The last full build ({build['date']}, {build['cores']} cores) ran {len(seconds)} snippets and "
            f"notebooks for {sum(value for _, value in seconds):,.0f} s of worker time:\n\n"
            f"| snippet | seconds |\n| :-- | --: |{rows}")


class _Records(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        made = {RECORDS: records_markdown, TIMINGS: timings_markdown}
        return [out for line in lines for out in (made[line.strip()]().split("\n") if line.strip() in made
                                                  else [line])]


class RecordsExtension(Extension):
    """The build report page's records, from ``bench/records/``, in place of its markers."""

    def extendMarkdown(self, md) -> None:  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.register(_Records(md), "sdpa_records", 33)  # before raw HTML (20) reads the markers


makeExtension, on_config = markdown_extension(RecordsExtension)  # Python-Markdown's entry point, and the hook


def with_profile(html: str, profile: str, page, config, files) -> str:
    """A page's HTML naming the profile that sized its experiments: quick in a line under its
    title, linking what the full build decides; full in a closing line, linking the build
    report (a link to a page the site lacks, in a one-page preview, left out)."""
    def link(target: str, text: str) -> str:
        path, _, anchor = target.partition("#")
        found = files.get_file_from_path(path)
        url = found.url_relative_to(page.file) + (f"#{anchor}" if anchor else "") if found else None
        return f' (<a href="{url}">{text}</a>)' if url else ""

    if profile != "quick":
        return html + (f'\n<p class="sdpa-profile">Computed while the site was built, at the full profile\'s '
                       f'sizes{link(REPORT, "build report")}.</p>\n')
    top = (f'<p class="sdpa-profile">Built with the <strong>quick profile</strong>: a verdict marked '
           f'<em>full profile</em> is decided by the published full build'
           f'{link(config.extra.get(DECIDES, REPORT), "what it decides")}.</p>\n')
    at = html.find("</h1>") + len("</h1>") if "</h1>" in html else 0
    return f"{html[:at]}\n{top}{html[at:].lstrip(chr(10))}"
