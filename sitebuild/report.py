"""The build report: what the build read from the store, and the digests it was built from.

Every executed snippet, with its page, figures, device, profile, seconds and whether this
build ran it (else an earlier run into the store did), and the notebook page. Written to
``build-report.json`` beside the site and read by the *Build report* page, so timings
stay out of the pages and two builds give byte-identical HTML. Its ``digests`` name the
code, the run's context and the sources the site was made from: a test of a site built
beforehand (``SDPA_BUILT_SITE``) compares them with the checkout's (:func:`digests`).

The *Build report* page also says how the claims were swept and how long the last full
build took, read from the records that ``scripts/claims_sweep.py --record`` and
``scripts/benchmark.py --full`` commit under ``bench/records/`` (:func:`records_markdown`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from sdpa import env
from sdpa.style import FIGURE_CLASS, FIGURE_ID_PREFIX

FIGURE_ID = re.compile(rf'<figure class="{re.escape(FIGURE_CLASS)}" id="{re.escape(FIGURE_ID_PREFIX)}([^"]+)"')
RECORDS_DIR = Path(__file__).resolve().parents[1] / "bench" / "records"
#: ``extra: full_build_decides:`` in mkdocs.yml names the page (and anchor) that says what
#: the full build decides; a quick-built page links there from its top.
DECIDES, REPORT = "full_build_decides", "build-report.md"
#: The line of docs/build-report.md that the records' sentences replace.
RECORDS = "<!-- records -->"


class BuildReport:
    def __init__(self) -> None:
        self.snippets: list[dict] = []
        self.notebooks: list[dict] = []

    def add(self, page: str, snippet: str, record: dict, *, ran: bool) -> None:
        """A snippet's ``record`` from the store (``ran``: this build's workers wrote it)."""
        output = record["output"]
        self.snippets.append({"page": page, "snippet": snippet, "figures": FIGURE_ID.findall(output),
                              "tables": output.count("<table>"), "seconds": record["seconds"], "ran": ran,
                              **{key: record[key] for key in ("device", "torch", "profile")}})

    def add_notebook(self, page: str, record: dict, *, ran: bool) -> None:
        self.notebooks.append({"page": page, "seconds": record["seconds"], "ran": ran,
                               **{key: record[key] for key in ("device", "torch", "profile")}})

    def write(self, site_dir: str, digests: dict) -> None:
        total = round(sum(entry["seconds"] for entry in self.snippets + self.notebooks), 3)
        report = {"snippets": self.snippets, "notebooks": self.notebooks, "total_seconds": total, "digests": digests}
        Path(site_dir, "build-report.json").write_text(json.dumps(report, indent=1))


def digests(config, plan) -> dict:
    """What a site was made from: the code its snippets ran (``sitebuild.execute.code``),
    their run's context, and every file the build reads (the pages, the snippets and their
    includes, the build's code, ``mkdocs.yml``)."""
    digest = hashlib.sha256()
    roots = [Path(config.config_file_path), Path(config.docs_dir), Path(__file__).parent,
             *(Path(base) for base in config.mdx_configs["pymdownx.snippets"]["base_path"])]
    for root in sorted({root.resolve() for root in roots}):
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(root.parent)}".encode() + b"\0" + path.read_bytes() + b"\0")
    return {"code": plan.code, "context": dict(env.run_context(plan.device)), "sources": digest.hexdigest()}


def _offsets(offsets: list[int]) -> str:
    """``0–19`` for a run of offsets, else the list."""
    if offsets == list(range(offsets[0], offsets[-1] + 1)) and len(offsets) > 2:
        return f"{offsets[0]}–{offsets[-1]}"
    return ", ".join(map(str, offsets))


def records_markdown(folder: Path = RECORDS_DIR) -> str:
    """The build report's sentences on the recorded claim sweeps and the last full build."""
    def read(name: str) -> dict:
        try:
            return json.loads((folder / name).read_text())
        except (OSError, ValueError):
            return {}

    sweeps, build = read("claims-sweeps.json"), read("full-build.json")
    lines = [f"- The {profile} profile's claims: " + (
        f"{s['tests']} claim tests swept at {len(s['offsets'])} seed offsets ({_offsets(s['offsets'])}), "
        f"{s['failed']} failing at some offset, the smallest margin {s['min_margin']:.1f} standard deviations "
        f"over the offsets ({s['date']})." if (s := sweeps.get(profile)) else "no sweep recorded yet.")
        for profile in env.PROFILES]
    return "\n".join(lines + [
        f"- The last full build took {build['build_s'] / 60:.1f} minutes ({build['build_s']:,.0f} s) on "
        f"{build['cores']} cores, and its claims, reading its store, {build['claims_s']:,.0f} s more "
        f"({build['date']})." if build else "- No full build has been recorded yet."])


def with_profile(html: str, profile: str, page, config, files) -> str:
    """A page's HTML with the profile that sized its experiments named: a quick-built page
    says so in a line under its title, linking what the full build decides; a full-built
    page closes with a line naming its profile, linking the build report. A link whose page
    the site lacks (a one-page preview) is left out."""
    def link(target: str, text: str) -> str:
        path, _, anchor = target.partition("#")
        found = files.get_file_from_path(path)
        url = found.url_relative_to(page.file) + (f"#{anchor}" if anchor else "") if found else None
        return f' (<a href="{url}">{text}</a>)' if url else ""

    if profile != "quick":
        return html + (f'\n<p class="sdpa-profile">Every figure and table of this page was computed while the '
                       f'site was built, with the full profile, the experiment sizes the published site is built '
                       f'with{link(REPORT, "build report")}.</p>\n')
    top = (f'<p class="sdpa-profile">Built with the <strong>quick profile</strong> (the experiments at their small '
           f'size): a verdict marked <em>full profile</em> is decided by the full build, which the published site '
           f'uses{link(config.extra.get(DECIDES, REPORT), "what the full build decides")}.</p>\n')
    at = html.find("</h1>") + len("</h1>") if "</h1>" in html else 0
    return f"{html[:at]}\n{top}{html[at:].lstrip(chr(10))}"
