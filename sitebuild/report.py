"""The build report: every executed snippet with its page, figures, device and seconds.

Each snippet (and each executed notebook) also says whether it ran in a worker process
(:mod:`sitebuild.pool`) or in the MkDocs process.

Written to ``build-report.json`` beside the site and read by the *Build report* page, so
timings stay out of the pages and two builds give byte-identical HTML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sdpa.style import FIGURE_CLASS, FIGURE_ID_PREFIX

FIGURE_ID = re.compile(rf'<figure class="{re.escape(FIGURE_CLASS)}" id="{re.escape(FIGURE_ID_PREFIX)}([^"]+)"')


class BuildReport:
    def __init__(self) -> None:
        self.snippets: list[dict] = []
        self.notebooks: list[dict] = []

    def add(self, page: str, snippet: str, output: str, seconds: float, runtime: tuple[str, str, str], *,
            cached: bool, worker: bool = False) -> None:
        """``runtime``: the device the snippet ran on, the torch version and the profile."""
        self.snippets.append({
            "page": page,
            "snippet": snippet,
            "figures": FIGURE_ID.findall(str(output)),
            "tables": str(output).count("<table>"),
            "seconds": seconds,
            "cached": cached,
            "worker": worker,
            "device": runtime[0],
            "torch": runtime[1],
            "profile": runtime[2],
        })

    def add_notebook(self, page: str, seconds: float, *, worker: bool) -> None:
        self.notebooks.append({"page": page, "seconds": seconds, "worker": worker})

    def seconds_per_page(self) -> dict[str, float]:
        """Seconds of each page's snippets that ran (not cached), and of each notebook."""
        seconds: dict[str, float] = {}
        for entry in self.snippets:
            if not entry["cached"]:
                seconds[entry["page"]] = round(seconds.get(entry["page"], 0) + entry["seconds"], 3)
        return {**seconds, **{entry["page"]: entry["seconds"] for entry in self.notebooks}}

    def write(self, site_dir: str) -> None:
        total = round(sum(entry["seconds"] for entry in self.snippets if not entry["cached"]), 3)
        report = {"snippets": self.snippets, "total_seconds": total, "notebooks": self.notebooks}
        Path(site_dir, "build-report.json").write_text(json.dumps(report, indent=1))


def profile_note(profile: str, report_url: str | None, decides_url: str | None) -> tuple[str, str]:
    """Where a page whose snippets ran names the profile that sized its experiments:
    ``(top, end)``, HTML for the page's top and for its end. A quick-built page says so at
    its top, in one line, linking to what the full build decides (``decides_url``); a
    full-built page closes with a line that names its profile, linking the build report
    (``report_url``). A link whose page the site lacks (None) is left out."""
    if profile == "quick":
        decides = f' (<a href="{decides_url}">what the full build decides</a>)' if decides_url else ""
        return (f'<p class="sdpa-profile">Built with the <strong>quick profile</strong> (experiments '
                f'sized for a CPU): a verdict marked <em>full profile</em> is decided by the full build, '
                f'which the published site uses{decides}.</p>\n', "")
    report = f' (<a href="{report_url}">build report</a>)' if report_url else ""
    return "", (f'\n<p class="sdpa-profile">Every figure and table of this page was computed while the site '
                f'was built, with the full profile, the experiment sizes the published site is built with'
                f'{report}.</p>\n')
