"""The site builds strictly, renders every figure and table, and fails loudly."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import (DOCS, REPO, SNIPPETS, ahead, included_snippets, mkdocs_process, network_can_be_cut,
                      page_includes, run_ahead)
from builds import die_with_parent
from sdpa import env


def mkdocs(*args: str, engine: str = "mkdocs", offline: bool = False, **changes: str) -> subprocess.CompletedProcess:
    """Run :func:`mkdocs_process` to its end, in a process that dies with the session."""
    command, environment = mkdocs_process(*args, engine=engine, offline=offline, **changes)
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=900,
                          preexec_fn=functools.partial(die_with_parent, os.getpid()))


def build_in_process(config: Path, site: Path, store: Path) -> Path:
    """Build ``config``'s site into ``site`` through MkDocs' API, one worker running its
    snippets into ``store``."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    with contextlib.chdir(REPO), env.changed(**{env.STORE: str(store), env.JOBS: "1", "NO_MKDOCS_2_WARNING": "1"}):
        loaded = load_config(str(config), site_dir=str(site))
        loaded.plugins.on_startup(command="build", dirty=False)
        try:
            build(loaded)
        finally:
            loaded.plugins.on_shutdown()
    return site


def page_html(site: Path, page: str) -> str:
    stem = page.removesuffix(".md").removesuffix("index")  # code/index.md: code/index.html
    return (site / stem / "index.html").read_text()


#: A Markdown table's rule under its header (``| :-- | --: |``), as a snippet prints it.
TABLE_RULE = re.compile(r"^\s*\|\s*:?-{2,}", re.M)


@pytest.mark.parametrize("page", sorted(page_includes()))
def test_page_rendered_its_figures_and_tables(page, built_site, run_snippet):
    """The page holds every figure and table its snippets printed (what they print may
    depend on the profile)."""
    html = page_html(built_site, page)
    outputs = [run_snippet(snippet).output for snippet in page_includes()[page]]
    figures = sum(output.count('<figure class="sdpa-figure"') for output in outputs)
    tables = sum(len(TABLE_RULE.findall(output)) + output.count("<table>") for output in outputs)
    assert html.count('<figure class="sdpa-figure"') >= figures
    assert html.count("<table>") >= tables
    assert "Traceback (most recent call last)" not in html
    assert 'class="arithmatex"' not in html, "math left as TeX"
    for figure in re.findall(r'<figure class="sdpa-figure".*?</figure>', html, re.S):
        assert "<figcaption>" in figure and "<title id=" in figure, "figure without caption or text alternative"
    ids = re.findall(r'\bid="([^"]+)"', html)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"docs/{page}: ids repeated on the page: {duplicates[:5]}"


def _report(site: Path) -> dict:
    return json.loads((site / "build-report.json").read_text())


def _without_timings(report: dict) -> dict:
    """A build report less what may differ between two builds: seconds, and whether it ran them."""
    def plain(entries):
        return [{k: v for k, v in entry.items() if k not in ("seconds", "ran")} for entry in entries]

    return {"snippets": plain(report["snippets"]), "notebooks": plain(report["notebooks"]),
            "digests": {k: v for k, v in report["digests"].items() if k != "sources"}}


def test_the_site_builds_offline_printing_only_info_lines(parallel_site):
    """The session's build (``builds.build_site``): a clean build in a fresh process,
    what the store lacks run by two workers, with the network cut where the OS allows it.
    It prints only INFO lines: MkDocs' own and, while snippets run, one per page."""
    if not parallel_site.offline and env.ci():
        pytest.fail("CI must be able to cut the network (unshare -rn) for this test")
    assert parallel_site.returncode == 0, parallel_site.output
    alarming = [line for line in parallel_site.output.splitlines() if not line.startswith("INFO")]
    assert not alarming, f"a clean build should print only INFO lines: {alarming}"
    report = _report(parallel_site.site)
    assert report["notebooks"] and set(report["digests"]) == {"code", "context", "sources"}


#: A small site of real snippets (figures, a table, the explorable figure; two pages, so
#: that two workers share them), built both ways by the test below.
SMALL_SITE = {
    "index.md": ["temperature/softmax_temperature.py", "derivation/explorable.py"],
    "second.md": ["derivation/worked_example.py", "practice/multihead_scales.py"],
}


@pytest.fixture
def small_site(tmp_path: Path) -> Path:
    """The real configuration around :data:`SMALL_SITE` (its pages include real snippets);
    a test that builds it is in the ``site`` tier (``conftest.SITE_FIXTURES``)."""
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs" / "assets", docs / "assets")
    for page, snippets in SMALL_SITE.items():
        fences = "".join(f'\n```python exec="on" source="tabbed-right" title="snippets/{snippet}"\n'
                         f'--8<-- "{snippet}"\n```\n' for snippet in snippets)
        (docs / page).write_text(f"# {page.removesuffix('.md').title()}\n{fences}")
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config.update(nav=[{"Home": "index.md"}, {"Second": "second.md"}], docs_dir=str(docs),
                  watch=[str(REPO / folder) for folder in config.get("watch", [])])
    config["hooks"] = [str(REPO / hook) for hook in config["hooks"]]
    for extension in config["markdown_extensions"]:
        if isinstance(extension, dict) and "pymdownx.snippets" in extension:
            extension["pymdownx.snippets"]["base_path"] = [str(REPO / b) for b in
                                                           extension["pymdownx.snippets"]["base_path"]]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def _same_files(first: Path, second: Path) -> None:
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    different = [str(p) for p in files if p.name != "build-report.json"
                 and (first / p).read_bytes() != (second / p).read_bytes()]
    assert not different, f"files that differ between {first.name} and {second.name}: {different}"


def test_a_parallel_build_offline_is_byte_identical_to_the_serial_build_and_to_one_from_the_store(small_site,
                                                                                                 tmp_path):
    """A small site of real snippets, built three times: through MkDocs' own API with one
    worker (``SDPA_JOBS=1``), in a fresh process with two workers and the network cut, each
    into a store of its own; then again from the second's store, which runs nothing. The
    three write the same files, byte for byte."""
    config = small_site
    serial, parallel, again = tmp_path / "serial", tmp_path / "parallel", tmp_path / "again"
    build_in_process(config, serial, tmp_path / "serial-store")
    for site in (parallel, again):
        result = mkdocs("build", "-f", str(config), "-d", str(site), offline=network_can_be_cut(),
                        **{env.JOBS: "2", env.STORE: str(tmp_path / "store")})
        assert result.returncode == 0, result.stdout + result.stderr
    reports = [_report(site) for site in (serial, parallel, again)]
    assert [{entry["ran"] for entry in report["snippets"]} for report in reports] == [{True}, {True}, {False}]
    assert len(reports[1]["snippets"]) == sum(map(len, SMALL_SITE.values()))
    assert _without_timings(reports[0]) == _without_timings(reports[1]) == _without_timings(reports[2])
    _same_files(serial, parallel)
    _same_files(parallel, again)


def test_the_build_report_says_how_the_claims_were_swept_and_the_full_build_took_from_its_records(tmp_path):
    from sitebuild import report

    (tmp_path / "claims-sweeps.json").write_text(json.dumps({"quick": {
        "blocks": list(range(11, 21)), "seed_block": 10_000_000, "settled_on": "offsets 0–19 and blocks 1–10",
        "tests": 80, "claims": 900, "failed": 0, "crashed": 0, "under": 0, "min_margin": 3.41,
        "date": "2026-12-03"}}))
    (tmp_path / "full-build.json").write_text(json.dumps({"build_s": 2593.0, "claims_s": 18.9, "cores": 2,
                                                          "date": "2026-12-02"}))
    (tmp_path / "claims-parts.json").write_text(json.dumps({"parts": [{
        "profile": "full", "pages": "temperature", "offsets": [0, 1, 2], "tests": 22, "failed": 0, "claims": 256,
        "under": 7, "min_margin": 2.2, "date": "2026-12-03"}]}))
    text = report.records_markdown(tmp_path)
    assert ("80 claim tests (900 recorded claims) certified on 10 independent seed blocks (11–20: every seed "
            "moved by a multiple of 10,000,000, so no two blocks share one), 0 failing on any, 0 with a margin "
            "under three standard deviations over the blocks, the smallest 3.4; their words were settled on "
            "offsets 0–19 and blocks 1–10, which the certifying blocks do not include") in text
    assert ("full profile's claims of temperature: 22 claim tests at consecutive seed offsets 0–2 (which share "
            "most of their seeds, so fewer independent draws than offsets), 0 failing, 7 of 256 "
            "recorded claims with a margin under three standard deviations, the smallest 2.2") in text
    assert "full profile's claims: no sweep of them all recorded yet" in text
    assert "43.2 minutes (2,593 s) on 2 cores, and its claims, reading its store, 19 s more" in text


def test_the_claim_parts_on_record_are_the_sweeps_tables_they_name():
    """bench/records/claims-parts.json, which the build report prints, says of each part what
    the table ``claims_sweep.py`` wrote for it says: offsets, tests, failures, claims, claims
    under 3 SD and the smallest margin (the first row of its margins, sorted smallest first)."""
    records = REPO / "bench" / "records"
    for part in json.loads((records / "claims-parts.json").read_text())["parts"]:
        table = (records / part["table"]).read_text()
        first, last = re.search(r"^Offsets: (\d+)(?:-(\d+))?\.", table, re.M).groups()
        assert part["offsets"] == list(range(int(first), int(last or first) + 1)), part["table"]
        tests, failed = map(int, re.search(r"^(\d+) claim tests; (\d+) failed", table, re.M).groups())
        claims, under = (int(n.replace(",", "")) for n in
                         re.search(r"^([\d,]+) recorded claims; (\d+) with", table, re.M).groups())
        assert (part["tests"], part["failed"], part["claims"], part["under"]) == (tests, failed, claims, under)
        if len(part["offsets"]) > 1:
            margins = table.split("## Margins", 1)[1]
            row = next(line for line in margins.splitlines() if line.startswith("| `tests/"))
            assert part["min_margin"] == float(row.rstrip(" |").rsplit("|", 1)[1].split()[0]), part["table"]


def test_the_build_report_gives_each_studys_seeds_as_the_full_profile_has_them():
    """"Quick and full builds": five seeds for the ablation, the temperature study, the QK-norm
    sweep and the head-count split; three choice seeds and seven fresh ones for every tuned
    setting of the recall task; three and eight for the language model's. The glossary's "full
    profile" says the same."""
    from sdpa import language
    from sdpa.sizes import SIZES

    full = SIZES["full"]
    for study in (full.ablation, full.temperature, full.qk_norm, full.head_count):
        assert len(study.seeds) == 5, study
    for plane in (full.plane, full.block_plane, full.spreads.plane, full.budgets.plane,
                  full.learned_scale.plane):
        assert (len(plane.choose_seeds), len(plane.confirm_seeds)) == (3, 7)
        assert not set(plane.choose_seeds) & set(plane.confirm_seeds)
    lm = language.SIZES["full"]
    assert (len(lm.choose_seeds), len(lm.confirm_seeds)) == (3, 8)
    text = " ".join((DOCS / "build-report.md").read_text().split())
    for words in ("the failure-modes ablation, the temperature study and the QK-norm sweep on five "
                  "seeds each, and the practice page's block split into more heads on five seeds",
                  "Every tuned setting of the tuning page's recall task is chosen on three seeds and confirmed on "
                  "seven fresh ones",
                  "The language model's settings are chosen on three seeds and confirmed on eight "
                  "fresh ones"):
        assert words in text, words
    glossary = (REPO / "includes" / "glossary.md").read_text()
    for words in ("confirms every tuned setting of the tuning page on seven fresh ones",
                  "the language model's on three choice seeds and eight fresh ones",
                  "Practice's block splits into more heads on five seeds"):
        assert words in glossary, words


def test_the_build_report_page_carries_the_records(built_site):
    from html import unescape

    from sitebuild import report

    built = page_html(built_site, "build-report.md")
    page = unescape(re.sub(r"<[^>]+>", "", built))
    for line in report.records_markdown().splitlines():
        assert line.removeprefix("- ") in page
    timings = report.timings_markdown().split("\n")
    article = built[built.index("<article"):built.index("</article>")]
    assert timings[0] in page and len(timings) > 3 and "<script" not in article  # in the HTML, no script
    for row in timings[4:]:
        name, seconds = row.strip("| ").split(" | ")
        assert f"{name.strip('`')}\n{seconds}" in page, row


def test_the_site_publishes_no_tool_configuration(built_site):
    """docs/ruff.toml (the lint width of what readers see) stays out of the site."""
    assert not list(built_site.glob("*.toml"))


def test_build_report_lists_every_snippet_and_figure(built_site):
    report = json.loads((built_site / "build-report.json").read_text())
    ran = {entry["snippet"] for entry in report["snippets"]}
    assert {f"snippets/{s}" for s in included_snippets()} <= ran
    for entry in report["snippets"]:
        assert entry["seconds"] >= 0 and entry["device"] and entry["torch"] and entry["profile"]
    reported = sorted(name for entry in report["snippets"] for name in entry["figures"])
    on_pages = sorted(  # the Markdown pages' figures (the lab notebook's come from its kernel)
        name for page in page_includes() for name in re.findall(r'id="fig-([^"]+)"', page_html(built_site, page))
    )
    assert reported == on_pages


def test_the_lab_notebook_is_offered_as_ipynb_and_as_its_script(built_site):
    import jupytext
    import nbformat

    from sitebuild.notebook import download

    page = (built_site / "lab" / "index.html").read_text()
    assert 'href="lab.ipynb"' in page and 'href="lab.py"' in page
    downloaded = nbformat.read(built_site / "lab" / "lab.ipynb", as_version=4)
    nbformat.validate(downloaded)
    source = jupytext.read(REPO / "docs" / "lab.py")
    assert [c.source for c in downloaded.cells[1:]] == [c.source for c in source.cells]
    assert "LIBRARY = {" in downloaded.cells[0].source, "the download's first cell should carry the library"
    # The notebook tests/test_lab.py runs in an empty folder:
    assert downloaded.cells[0].source == download(REPO / "docs" / "lab.py", [SNIPPETS]).cells[0].source
    assert (built_site / "lab" / "lab.py").read_text() == (REPO / "docs" / "lab.py").read_text()


# ---- failing loudly, on throwaway copies --------------------------------------------

BROKEN_SNIPPET = """\
\"\"\"A snippet that raises on its fourth line.\"\"\"

def ratio():
    return 1 / 0

print(ratio())
"""


FINE_PAGE = '# Fine\n\n```python exec="on" title="snippets/broken/fine.py"\n--8<-- "broken/fine.py"\n```\n'


def throwaway_site(tmp_path: Path, page_body: str, snippet: str | None = BROKEN_SNIPPET) -> Path:
    """A copy of the real config with a page and a snippet of our own, and a second page
    whose snippet runs fine (two pages: with SDPA_JOBS > 1 they run in worker processes)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets" / "broken").mkdir(parents=True)
    (tmp_path / "docs" / "index.md").write_text(page_body)
    (tmp_path / "docs" / "fine.md").write_text(FINE_PAGE)
    (tmp_path / "snippets" / "broken" / "fine.py").write_text('"""Prints a line."""\n\nprint("fine")\n')
    if snippet is not None:
        (tmp_path / "snippets" / "broken" / "boom.py").write_text(snippet)
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config["nav"] = [{"Home": "index.md"}, {"Fine": "fine.md"}]
    config["hooks"] = [str(REPO / hook) for hook in config["hooks"]]
    config.pop("extra_css", None)
    config.pop("watch", None)  # the site's folders, relative to its mkdocs.yml
    for extension in config["markdown_extensions"]:
        if isinstance(extension, dict) and "pymdownx.snippets" in extension:
            bases = extension["pymdownx.snippets"]["base_path"]  # the site's own (snippets, includes) too
            extension["pymdownx.snippets"]["base_path"] = [str(tmp_path / "snippets")] + [str(REPO / b) for b in bases]
    path = tmp_path / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


PAGE = '# Broken\n\n```python exec="on" title="snippets/broken/boom.py"\n--8<-- "broken/boom.py"\n```\n'


MISSING_INCLUDE = ('# Broken\n\nText.\n\n```python exec="on" title="snippets/broken/nowhere.py"\n'
                   '--8<-- "broken/nowhere.py"\n```\n')
UNTITLED = '# Broken\n\n```python exec="on"\n--8<-- "broken/boom.py"\n```\n'
BROKEN_LINK = "# Broken\n\nSee [nothing](nowhere.md) and [here](#no-such-anchor).\n"

#: The throwaway builds that must fail: name -> (page, engine, flags, SDPA_JOBS).
FAILING_BUILDS = {
    "plain-serial": (PAGE, "mkdocs", [], "1"),
    "quiet": (PAGE, "mkdocs", ["-q"], "2"),
    "verbose": (PAGE, "mkdocs", ["-v"], "2"),
    "properdocs-quiet": (PAGE, "properdocs", ["-q"], "2"),
    "missing-include": (MISSING_INCLUDE, "mkdocs", ["-q"], "1"),
    "untitled-fence": (UNTITLED, "mkdocs", ["-q"], "1"),
    "broken-link": (BROKEN_LINK, "mkdocs", [], "1"),
}


def start_failing_builds() -> tuple[Path, dict[str, threading.Event], dict[str, str]]:
    """Build every site of :data:`FAILING_BUILDS`, one after another, in a thread (each
    build is a process of its own), from the start of the session: (folder, done, output)."""
    root = Path(tempfile.mkdtemp(prefix="sdpa-failing-builds-"))
    done = {name: threading.Event() for name in FAILING_BUILDS}
    outputs: dict[str, str] = {}

    def build_all() -> None:
        for name, (page, engine, flags, jobs) in FAILING_BUILDS.items():
            folder = root / name
            folder.mkdir()
            try:
                config = throwaway_site(folder, page)
                result = mkdocs("build", "-f", str(config), "-d", str(folder / "site"), *flags, engine=engine,
                                **{env.JOBS: jobs, env.STORE: str(folder / "store")})
                outputs[name] = f"exit {result.returncode}\n{result.stdout}{result.stderr}"
            except Exception as error:  # noqa: BLE001 - handed to the test
                outputs[name] = f"the build could not run: {error!r}"
            done[name].set()

    threading.Thread(target=build_all, name="failing builds", daemon=True).start()
    return root, done, outputs


run_ahead("failing_builds", start_failing_builds)  # started as the session's tests are collected


@pytest.fixture(scope="module")
def failing_builds():
    """``failing_builds(name)``: the exit status and the output of that build."""
    root, done, outputs = ahead("failing_builds", start_failing_builds)

    def result(name: str) -> tuple[int, str]:
        assert done[name].wait(timeout=600), f"the build {name} did not end"
        status, _, output = outputs[name].partition("\n")
        return int(status.removeprefix("exit ")) if status.startswith("exit ") else -1, output

    yield result
    for event in done.values():
        event.wait(timeout=600)
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name", ["plain-serial", "quiet", "verbose", "properdocs-quiet"])
def test_raising_snippet_fails_the_build_naming_file_and_line(failing_builds, name):
    """Run by one worker (SDPA_JOBS=1) or two, at every verbosity, with either engine: the
    message is made in one place (``SnippetFailure.message``, sitebuild/execute.py)."""
    returncode, output = failing_builds(name)
    assert returncode not in (0, -1), output
    assert "boom.py, line 4" in output
    assert "ZeroDivisionError: division by zero" in output


def test_missing_include_fails_the_build_naming_the_page_line(failing_builds):
    returncode, output = failing_builds("missing-include")
    assert returncode not in (0, -1), output
    assert "index.md" in output and "line 6: the include 'broken/nowhere.py' is missing" in output, output
    assert "Traceback" not in output, output


def test_a_fence_must_name_the_file_it_runs(failing_builds):
    returncode, output = failing_builds("untitled-fence")
    assert returncode not in (0, -1), output
    assert 'line 3: the fence that includes \'broken/boom.py\' needs title="snippets/broken/boom.py"' in output


def test_broken_link_fails_the_build(failing_builds):
    returncode, output = failing_builds("broken-link")
    assert returncode not in (0, -1), output
    assert "nowhere.md" in output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_keeps_serving_and_shows_the_error(tmp_path):
    config = throwaway_site(tmp_path, PAGE)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}", "--no-livereload"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=env.environment({"NO_MKDOCS_2_WARNING": "1", env.STORE: str(tmp_path / "store")}),
    )
    try:
        page = ""
        for _ in range(120):
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert server.poll() is None, "mkdocs serve stopped"
        assert "ZeroDivisionError" in page, "the page should show the traceback"
    finally:
        server.terminate()
        terminal = server.communicate(timeout=30)[0]
    assert "boom.py, line 4" in terminal


def test_a_dirty_rebuild_after_a_revert_shows_the_reverted_page(tmp_path):
    """Stale sequence (1): ``mkdocs build --dirty`` (and ``serve --dirty``) rendered a page
    again only when one of its snippets ran, and a reverted snippet's key is already in the
    store: the page kept the edit's output. A page is rendered again whenever what it reads
    changed, and the search index holds every page once, as it is now."""
    config = throwaway_site(tmp_path, PAGE, snippet='print("first")\n')
    folder, site = tmp_path / "snippets" / "broken", tmp_path / "site"
    options = {env.JOBS: "1", env.STORE: str(tmp_path / "store")}
    shown = []
    for snippet, source, flags in (("boom", "first", []), ("boom", "second", ["--dirty"]),
                                   ("boom", "first", ["--dirty"]), ("fine", "second", ["--dirty"])):
        (folder / f"{snippet}.py").write_text(f'print("{source}")\n')
        done = mkdocs("build", "-f", str(config), "-d", str(site), "--no-strict", *flags, **options)
        assert done.returncode == 0, done.stderr
        index = json.loads((site / "search" / "search_index.json").read_text())["docs"]
        pages = sorted(entry["location"] for entry in index if "#" not in entry["location"])
        words = re.findall(r"\b(first|second)\b", " ".join(entry["text"] for entry in index))
        shown.append((re.findall(r"<p>(first|second)</p>", page_html(site, "index.md")), pages, words))
    assert shown == [(["first"], ["", "fine/"], ["first"]), (["second"], ["", "fine/"], ["second"]),
                     (["first"], ["", "fine/"], ["first"]), (["first"], ["", "fine/"], ["first", "second"])]


def _get(url: str) -> str:
    try:
        return urllib.request.urlopen(url, timeout=5).read().decode()
    except OSError:
        return ""


def test_serve_rebuilds_after_an_edit_of_any_folder_the_build_reads(tmp_path):
    """Stale sequence (2): plain ``mkdocs serve`` watched docs/ and snippets/ only, so an
    edit of includes/ (the glossary, the shared verdicts) or bench/records/ (the build
    report) was not shown, and one of sitebuild/ needed a restart. Served from a copy of the
    site's code, with mkdocs.yml's own ``watch`` list."""
    for folder in ("sitebuild", "snippets/sdpa", "includes", "docs/assets"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "includes" / "probe.md").write_text("Included: first.\n")
    records = tmp_path / "bench" / "records" / "full-build.json"
    records.parent.mkdir(parents=True)
    records.write_text(json.dumps({"build_s": 60, "cores": 2, "claims_s": 1, "date": "first-date"}))
    (tmp_path / "docs" / "index.md").write_text('# Home\n\n--8<-- "probe.md"\n\n<!-- records -->\n')
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config["nav"] = [{"Home": "index.md"}]
    config["plugins"] = [plugin for plugin in config["plugins"] if plugin in ("search", "markdown-exec")]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env.environment({"NO_MKDOCS_2_WARNING": "1", env.STORE: str(tmp_path / "store"),
                                                   "PYTHONPATH": ""}))
    report = tmp_path / "sitebuild" / "report.py"
    edits = [(None, None, "Included: first."),
             (tmp_path / "includes" / "probe.md", ("first", "second"), "Included: second."),
             (records, ("first-date", "second-date"), "second-date"),
             (report, ("The last full build took", "Edited: the last full build took"), "Edited: the last")]
    try:
        for path, (old, new), shown in ((p, e or ("", ""), s) for p, e, s in edits):
            if path is not None:
                path.write_text(path.read_text().replace(old, new))
            deadline = time.monotonic() + 120
            while shown not in _get(f"http://127.0.0.1:{port}/") and time.monotonic() < deadline:
                assert server.poll() is None, "mkdocs serve stopped"
                time.sleep(0.3)
            assert shown in _get(f"http://127.0.0.1:{port}/"), f"not shown after its edit: {shown}"
    finally:
        server.terminate()
        terminal = server.communicate(timeout=30)[0]
    assert "Error" not in terminal, terminal


def test_one_page_s_snippets_run_in_several_workers_at_once(tmp_path):
    """Each snippet is a job of its own: two snippets of one page, each waiting until the
    other has started, finish only if two workers run them at once; the progress line
    names the page once, when both are done."""
    from sitebuild.execute import Plan, Snippet, code, run_plan

    wait = ("import os, time\nfrom pathlib import Path\nPath(r'{folder}', '{me}').touch()\n"
            "for _ in range(600):\n    if Path(r'{folder}', '{other}').exists():\n        break\n"
            "    time.sleep(0.05)\nelse:\n    raise TimeoutError('ran alone')\nprint(os.getpid())\n")
    snippets = [Snippet("page.md", f"snippets/page/{me}.py", wait.format(folder=tmp_path, me=me, other=other))
                for me, other in (("a", "b"), ("b", "a"))]
    plan = Plan({"page.md": snippets}, {}, code(), "cpu", tmp_path / "store")
    said = []
    run_plan(plan, 2, say=said.append)
    pids = {json.loads(plan.record(snippet).read_text())["output"] for snippet in snippets}
    assert len(pids) == 2 and all(pid.strip().isdigit() for pid in pids), pids
    assert [line for line in said if "docs/page.md" in line] == [said[-1]] and "2 snippet(s)" in said[-1]


def test_a_run_says_what_runs_soon_after_its_start_and_then_at_intervals(tmp_path):
    """A full build printed its first line after 66 minutes (a line came only as a whole
    page was done). Now a run says within seconds what runs, and then every ``every``
    seconds (30 in a build): jobs done of all, those running, the time so far."""
    from sitebuild.execute import Plan, Run, Snippet, code

    quick = Snippet("page.md", "snippets/page/quick.py", "print(1)\n")  # done before a line tells it started
    slow = Snippet("page.md", "snippets/page/slow.py", "import time\ntime.sleep(4)\n")
    said: list[str] = []
    Run(Plan({"page.md": [quick, slow]}, {}, code(), "cpu", tmp_path / "store"), 1, said.append, every=1.0).close()
    ticks = [line for line in said if "running: snippets/page/slow.py" in line]
    assert len(ticks) >= 2 and all("1 of 2 jobs done" in line and "so far" in line for line in ticks), said


def test_an_empty_store_runs_the_last_full_build_s_slowest_jobs_first(tmp_path, monkeypatch):
    """With nothing timed in its store, a build orders its jobs by the seconds the last full
    build's record gives them (the publishing workflow starts from an empty store)."""
    from sitebuild import execute

    log = tmp_path / "order.txt"
    snippets = [execute.Snippet("page.md", f"snippets/page/{name}.py",
                                f"with open(r'{log}', 'a') as f:\n    f.write('{name}')\n") for name in "abc"]
    record = tmp_path / "full-build.json"
    record.write_text(json.dumps({"seconds": {"snippets/page/c.py": 9.0, "snippets/page/b.py": 3.0}}))
    monkeypatch.setattr(execute, "LAST_FULL_BUILD", record)
    execute.run_plan(execute.Plan({"page.md": snippets}, {}, execute.code(), "cpu", tmp_path / "store"), 1,
                     say=lambda line: None)
    assert log.read_text() == "acb"  # never timed first, then the slowest


def test_the_workers_preload_the_heavy_modules_the_snippets_import():
    """The forkserver imports torch, numpy and matplotlib for the site's snippets (they use
    the library), and none of them for the throwaway sites above."""
    from sitebuild import execute

    site = [(SNIPPETS / snippet).read_text() for snippet in included_snippets()]
    assert execute.preload(site) == ["json", "numpy", "torch", "matplotlib"]
    assert execute.preload([BROKEN_SNIPPET, 'print("fine")']) == ["json"]


def test_a_quick_built_page_says_so_under_its_title(built_site):
    """A page whose snippets ran with the quick profile says so in one line under its
    title, linking to what the full build decides (``extra.full_build_decides``); a page
    that runs no snippet says nothing of profiles. A full-built page closes with its line."""
    from types import SimpleNamespace

    from sitebuild import report

    path, _, anchor = yaml.safe_load((REPO / "mkdocs.yml").read_text())["extra"]["full_build_decides"].partition("#")
    href = f"../{path.removesuffix('.md')}/" + (f"#{anchor}" if anchor else "")
    page = page_html(built_site, "derivation.md")
    if env.profile() == "quick":
        line = re.search(r'</h1>\n(<p class="sdpa-profile">.*?</p>)\n', page)
        assert line and "quick profile" in line[1] and f'href="{href}"' in line[1]
    else:  # the published site: a closing line, linking the build report
        assert "full profile" in page and "quick profile" not in page
    assert page.count("sdpa-profile") == 1
    assert "sdpa-profile" not in page_html(built_site, "glossary.md")
    linked = SimpleNamespace(get_file_from_path=lambda path: SimpleNamespace(url_relative_to=lambda page: "../r/"))
    full = report.with_profile("<h1>T</h1>\n<p>Text.</p>", "full", SimpleNamespace(file=None),
                               SimpleNamespace(extra={}), linked)
    assert full.startswith("<h1>T</h1>\n<p>Text.</p>\n") and "full profile" in full and 'href="../r/"' in full
    files = SimpleNamespace(get_file_from_path=lambda path: None)  # a one-page preview: no page to link
    alone = report.with_profile("<h1>T</h1>\n<p>Text.</p>", "quick", SimpleNamespace(file=None),
                                SimpleNamespace(extra={}), files)
    assert alone.startswith('<h1>T</h1>\n<p class="sdpa-profile">') and "href" not in alone


def test_zensical_yml_repeats_mkdocs_yml_and_lists_every_extension_the_hooks_add():
    """zensical.yml (the second engine's overlay) repeats mkdocs.yml's plugins (less
    mkdocs-jupyter, which Zensical lacks; markdown-exec registering no fence) and Markdown
    extensions (superfences' python fence reading the store), and lists every extension
    that MkDocs gets from a hook: fences and math (hooks.py), and each hook module that is
    one (``makeExtension``)."""
    import importlib

    from browser_support import _AnyTagLoader

    def read(name: str) -> dict:
        return yaml.load((REPO / name).read_text(), Loader=_AnyTagLoader)

    def named(entry) -> str:
        return entry if isinstance(entry, str) else next(iter(entry))

    mkdocs_yml, zensical_yml = read("mkdocs.yml"), read("zensical.yml")
    assert zensical_yml["INHERIT"] == "mkdocs.yml"
    plugins = [p for p in mkdocs_yml["plugins"] if named(p) != "mkdocs-jupyter"]
    assert [named(p) for p in zensical_yml["plugins"]] == [named(p) for p in plugins]
    assert [p for p in zensical_yml["plugins"] if named(p) != "markdown-exec"] == [
        p for p in plugins if named(p) != "markdown-exec"]
    ours = [e for e in zensical_yml["markdown_extensions"] if named(e).startswith("sitebuild.")]
    assert [e for e in zensical_yml["markdown_extensions"] if e not in ours and named(e) != "pymdownx.superfences"] == [
        e for e in mkdocs_yml["markdown_extensions"] if named(e) != "pymdownx.superfences"]
    hooks = {Path(hook).stem for hook in mkdocs_yml["hooks"]}
    extensions = {"fences", "math"} | {name for name in hooks
                                       if hasattr(importlib.import_module(f"sitebuild.{name}"), "makeExtension")}
    assert {named(e).removeprefix("sitebuild.") for e in ours} == extensions


def test_contributing_lists_every_sitebuild_module_with_its_lines():
    """'What sitebuild keeps, and why': each module but the package's own, its length as it is
    now, and the total."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    listed = {name: int(lines) for name, lines in re.findall(r"^\| `(\w+\.py)` \| (\d+) \|", text, re.M)}
    lengths = {path.name: len(path.read_text(encoding="utf-8").splitlines())
               for path in (REPO / "sitebuild").glob("*.py")}
    assert listed == {name: n for name, n in lengths.items() if name != "__init__.py"}
    assert f"`sitebuild/` is {sum(lengths.values()):,} lines" in text
