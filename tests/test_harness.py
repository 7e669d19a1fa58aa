"""The session's harness (tests/harness.py): what a test reads, loud failures, and the workers' end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import builds
import harness
from conftest import FAST_TIER, REPO, SNIPPETS, included_snippets
from sdpa import env
from sitebuild.execute import SnippetError, SnippetFailure


def _item(test_file: str, snippet: str | None = None, pages: tuple[str, ...] = ()) -> SimpleNamespace:
    params = {"snippet": snippet} if snippet else {}
    marker = SimpleNamespace(args=pages)
    return SimpleNamespace(path=REPO / "tests" / test_file, callspec=SimpleNamespace(params=params),
                           nodeid=f"tests/{test_file}::test", iter_markers=lambda name: [marker] if pages else [])


def test_a_test_reads_the_pages_it_declares():
    """Its file's page, its snippet parameter's page, a marker's pages; never a page without snippets."""
    assert harness.declared_pages(_item("test_tuning.py")) == {"tuning.md"}
    assert harness.declared_pages(_item("test_glossary.py")) == set()  # the glossary runs no snippet
    assert harness.declared_pages(_item("test_glossary.py", pages=("failure-modes.md",))) == {"failure-modes.md"}
    snippet = included_snippets()[-1]
    assert harness.declared_pages(_item("test_snippets.py", snippet)) == {harness.page_of(snippet)}


def test_reading_a_snippet_of_an_undeclared_page_fails_saying_how_to_declare_it():
    with pytest.raises(pytest.fail.Exception, match=r'@pytest\.mark\.pages\("derivation\.md"\)'):
        harness.SESSION.run_snippet("derivation/score_std.py", _item("test_tuning.py"))


def test_a_kept_run_fails_loudly():
    """A name that did not pickle is a KeyError that says so; a snippet whose stored run
    failed raises its error, file and line, with its traceback, without running again."""
    kept = harness.KeptNamespace({"result": 1}, "derivation/score_std.py")
    with pytest.raises(KeyError, match="could not be pickled"):
        kept["helper"]
    session = harness.SESSION
    failure = SnippetFailure("snippets/derivation/score_std.py", 4, "ZeroDivisionError: division by zero",
                             "Traceback (most recent call last): ...")
    real = session.runs.get("derivation/score_std.py")
    session.runs["derivation/score_std.py"] = harness.SnippetRun(kept, "", [], failure)
    try:
        with pytest.raises(SnippetError, match=r"^snippets/derivation/score_std\.py, line 4: ZeroDivision") as raised:
            session.run_snippet("derivation/score_std.py", _item("test_derivation.py"))
    finally:
        session.runs.pop("derivation/score_std.py")
        if real is not None:
            session.runs["derivation/score_std.py"] = real
    assert raised.value.__notes__ == [failure.traceback]


def test_a_whole_tier_starts_its_runs_before_collecting(monkeypatch):
    """``python -m pytest`` needs the site, and its fast tier every page's snippets, so
    their runs start with the session; a command that selects tests waits for the
    collection to say what it needs."""
    monkeypatch.delenv(env.BUILT_SITE, raising=False)

    def command(source=pytest.Config.ArgsSource.TESTPATHS, **chosen):
        option = {"keyword": "", "markexpr": "", "deselect": None, "lf": False, "collectonly": False, **chosen}
        return SimpleNamespace(args_source=source, option=SimpleNamespace(**option))

    assert builds.whole_tier(command()) == "all"
    assert builds.whole_tier(command(markexpr=FAST_TIER)) == "fast" and FAST_TIER in (REPO / "README.md").read_text()
    assert builds.whole_tier(command(pytest.Config.ArgsSource.ARGS)) == ""  # python -m pytest tests/test_x.py
    for chosen in ({"keyword": "derivation"}, {"markexpr": "claims"}, {"deselect": ["tests/x.py"]},
                   {"lf": True}, {"collectonly": True}, {"keyword": "x", "markexpr": FAST_TIER}):
        assert builds.whole_tier(command(**chosen)) == "", chosen
    monkeypatch.setenv(env.BUILT_SITE, "/tmp/site")
    assert builds.whole_tier(command()) == ""


#: A session's driver: it starts the snippets' run as the harness does, on two pages whose
#: snippets write their process id and wait, then waits itself, to be stopped.
DRIVER = """
import signal, sys, time
# Ctrl-C as a terminal delivers it, even where this test was started from a background job
# (a shell's background job starts with SIGINT ignored, and its children inherit that).
signal.signal(signal.SIGINT, signal.default_int_handler)
import harness
process = harness.start([sys.executable, "-m", "sitebuild.execute", "--store", sys.argv[1], "-f", sys.argv[2],
                         "--jobs", "2"])
print(process.pid, flush=True)
time.sleep(600)
"""


def test_a_sweep_of_one_test_runs_only_the_snippets_it_reads(tmp_path):
    """``--only-read`` (what ``scripts/claims_sweep.py`` passes with a test's name): of the
    derivation page's snippets, only the one the test reads runs, into an empty store."""
    probe = tmp_path / "test_probe.py"
    probe.write_text('import pytest\n\n@pytest.mark.pages("derivation.md")\ndef test_probe(run_snippet):\n'
                     '    assert run_snippet("derivation/score_std.py").namespace["result"]\n')
    store = tmp_path / "store"
    environment = env.environment({"PYTHONPATH": os.pathsep.join(str(p) for p in (REPO / "tests", REPO, SNIPPETS)),
                                   env.STORE: str(store)})
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                           "--only-read", "--rootdir", str(tmp_path), str(probe)], cwd=REPO, env=environment,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(harness.page_includes()["derivation.md"]) > 5
    assert len(list((store / "snippets").glob("*.json"))) == 1, "more than the snippet the test read ran"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc (Linux)")
def test_the_workers_end_with_the_session_however_it_ends(tmp_path):
    """Ctrl-C (SIGINT to the session's process group, as a terminal sends it), a kill
    (SIGTERM) and a crash (SIGKILL): each time the process that runs the snippets, its two
    workers and their forkserver are gone within seconds."""
    docs, snippets = tmp_path / "docs", tmp_path / "snippets"
    docs.mkdir()
    for page in ("one", "two"):
        (snippets / page).mkdir(parents=True)
        (snippets / page / "wait.py").write_text(textwrap.dedent(f"""\
            import os, time
            open({str(tmp_path)!r} + f"/pid-{{os.getpid()}}", "w").close()
            time.sleep(300)
            """))
        (docs / f"{page}.md").write_text(f'# {page}\n\n```python exec="on" title="snippets/{page}/wait.py"\n'
                                         f'--8<-- "{page}/wait.py"\n```\n')
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\ndocs_dir: {docs}\nmarkdown_extensions:\n"
                      f"  - pymdownx.snippets:\n      base_path: [{snippets}]\n")
    drivers = {}
    for ending in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        store = tmp_path / f"store-{ending.name}"
        drivers[ending] = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(store), str(config)], cwd=REPO, stdout=subprocess.PIPE,
            text=True, start_new_session=True,
            env=env.environment({"PYTHONPATH": os.pathsep.join(str(p) for p in (REPO / "tests", REPO, SNIPPETS))}))
    session_pids = {ending: int(driver.stdout.readline()) for ending, driver in drivers.items()}
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("pid-*"))) < 2 * len(drivers) and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [int(path.name.removeprefix("pid-")) for path in tmp_path.glob("pid-*")]
    assert len(workers) == 2 * len(drivers), "the workers did not start"
    forkservers = {int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in workers}
    for ending, driver in drivers.items():
        os.killpg(driver.pid, ending) if ending == signal.SIGINT else driver.send_signal(ending)
    for driver in drivers.values():
        driver.wait(timeout=30)
    everything = [*session_pids.values(), *workers, *forkservers]
    deadline = time.monotonic() + 10
    while any(map(_alive, everything)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in everything if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes that outlived their session: {left}"
