"""The store (sitebuild/execute.py, sdpa.runtime.memo): keyed on all a run depends on, the code as imported.

Two tests replay the ways the stores this one replaced served a stale result: under
``mkdocs serve``, an edit to the build's code had the rebuild file the old code's output
under the new code's key; and the engines' shared memo, keyed on arguments and context but
not code, returned an edited engine's old result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import builds
import harness
from conftest import REPO, SNIPPETS, included_snippets
from sdpa import env
from sitebuild import execute
from sitebuild.execute import Plan, Snippet


def keys(code: str, device: str = "cpu", root: Path = SNIPPETS) -> dict[str, str]:
    return {s: Snippet("", f"snippets/{s}", (root / s).read_text()).key(code, device) for s in included_snippets()}


def test_keys_are_stable():
    assert keys(execute.code()) == keys(execute.code())


def test_editing_any_library_module_changes_every_key(tmp_path):
    """The whole package is in every key: a module a snippet reaches on first use
    (``import sdpa`` then ``sdpa.recall.run_recall``) cannot be missed."""
    copy = tmp_path / "snippets"
    shutil.copytree(SNIPPETS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = keys(env.code_digest(copy / "sdpa", *execute.KEYED), root=copy)
    with (copy / "sdpa" / "recall.py").open("a") as module:
        module.write("\n# an edit to a module reached lazily\n")
    after = keys(env.code_digest(copy / "sdpa", *execute.KEYED), root=copy)
    assert not {name for name in before if before[name] == after[name]}, "a key the edit left as it was"


@pytest.mark.parametrize(("name", "value"), [
    (env.SEED_OFFSET, "1"),  # a shifted run is another result
    (env.THREADS, "2"),  # float reductions add in another order: other bits
    (env.PROFILE, "full"),  # other sizes of every experiment
])
def test_the_source_the_code_the_device_and_the_environment_change_the_key(monkeypatch, name, value):
    for unset in (env.SEED_OFFSET, env.THREADS, env.PROFILE):
        monkeypatch.delenv(unset, raising=False)
    file = "derivation/score_std.py"
    snippet = Snippet("derivation.md", f"snippets/{file}", (SNIPPETS / file).read_text())
    base = snippet.key("code", "cpu")
    assert Snippet(snippet.page, snippet.file, snippet.source + "\n").key("code", "cpu") != base
    assert Snippet(snippet.page, "snippets/derivation/other.py", snippet.source).key("code", "cpu") != base
    assert snippet.key("other code", "cpu") != base and snippet.key("code", "cuda") != base
    monkeypatch.setenv(name, value)
    assert snippet.key("code", "cpu") != base


def test_the_snippets_and_the_memo_key_on_one_run_context_with_the_versions(monkeypatch):
    from sdpa import runtime

    monkeypatch.setenv(env.THREADS, "2")
    assert runtime.context() == env.run_context("cpu") and dict(env.run_context("cpu"))["threads"] == "2"
    assert set(dict(env.run_context("cpu"))) >= {"device", "profile", "threads", "seed_offset", "python", "torch",
                                                  "numpy", "matplotlib"}


def test_quick_is_the_default_profile_on_every_device(monkeypatch):
    monkeypatch.delenv(env.PROFILE, raising=False)
    assert dict(env.run_context("cuda"))["profile"] == dict(env.run_context("cpu"))["profile"] == "quick"
    monkeypatch.setenv(env.PROFILE, "full")
    assert dict(env.run_context("cpu"))["profile"] == "full"


@pytest.mark.parametrize("setting", ["", "cpu", " CPU "])
def test_the_key_names_the_device_the_snippets_run_on(monkeypatch, setting):
    """``execute.device`` answers without torch where it can; it must agree with the library."""
    from sdpa.runtime import device

    monkeypatch.setenv(env.DEVICE, setting)
    assert execute.device() == str(device())


def test_the_device_of_a_cpu_only_torch_is_known_without_importing_torch():
    """The MkDocs process, which only reads the store, imports no torch for the keys."""
    probe = "import sys; from sitebuild import execute; print(execute.device(), 'torch' in sys.modules)"
    device, imported = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env.environment(drop=(env.DEVICE,)),
                                      capture_output=True, text=True, check=True).stdout.split()
    if device != "cpu":
        pytest.skip("this torch sees a GPU: it is asked")
    assert imported == "False"


def _plan(root: Path, source: str, store: Path, code: str | None = None) -> Plan:
    snippet = Snippet("page.md", "snippets/page/probe.py", source)
    return Plan({"page.md": [snippet]}, {}, code or execute.code(), "cpu", store)


def test_a_worker_imports_no_build_code_but_the_keyed_modules(tmp_path):
    """What a snippet's key names of the build (``KEYED``) is all of it that the process
    that runs the snippet imports."""
    plan = _plan(tmp_path, "import sys\nprint(sorted(m for m in sys.modules if m.startswith('sitebuild')))\n",
                 tmp_path / "store")
    execute.run_plan(plan, 1, say=lambda line: None)
    imported = eval(json.loads(plan.record(plan.jobs["page.md"][0]).read_text())["output"])  # noqa: S307
    keyed = {"sitebuild" + (f".{path.stem}" if path.stem != "__init__" else "") for path in execute.KEYED}
    assert set(imported) == keyed


#: A process that lives on, as ``mkdocs serve`` does, and has its snippet run twice, with
#: an edit to the build's code in between (the snippet prints through the executor, whose
#: edit prefixes what it prints). Run from a copy of the checkout's code.
SERVE = """
import sys
from pathlib import Path
from sitebuild import execute

root = Path.cwd()
snippet = execute.Snippet("page.md", "snippets/page/probe.py", "print('printed')\\n")
for edit in (False, True):
    if edit:
        path = root / "sitebuild" / "execute.py"
        path.write_text(path.read_text().replace('return "".join(chunks)', 'return "edited: " + "".join(chunks)'))
    plan = execute.Plan({"page.md": [snippet]}, {}, execute.code(), "cpu", root / "store")
    execute.run_plan(plan, 1, say=lambda line: None)
    print(plan.record(snippet))
"""


def _copy_of_the_code(root: Path) -> dict:
    shutil.copytree(REPO / "sitebuild", root / "sitebuild", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SNIPPETS / "sdpa", root / "snippets" / "sdpa", ignore=shutil.ignore_patterns("__pycache__"))
    return {"cwd": root, "capture_output": True, "text": True, "timeout": 300,
            "env": env.environment({"PYTHONPATH": str(root), env.STORE: str(root / "store")})}


def test_a_rebuild_after_an_edit_of_the_build_code_files_the_new_code_s_output_under_its_key(tmp_path):
    """Stale sequence (1): under ``mkdocs serve``, after an edit to ``sitebuild/``, the
    rebuild ran the code imported at the start and filed its output under the key of the
    code on disk, which a later build then served. Now each run is made by a worker started
    for it, which imports the code its key names."""
    done = subprocess.run([sys.executable, "-c", SERVE], **_copy_of_the_code(tmp_path))
    assert done.returncode == 0, done.stderr
    before, after = (json.loads(Path(line).read_text())["output"] for line in done.stdout.split())
    assert (before, after) == ("printed\n", "edited: printed\n")


#: A snippet that edits a module of the library while it runs, as a contributor might.
EDITING = """
from pathlib import Path
from sitebuild import execute

source = "from pathlib import Path\\np = Path('snippets/sdpa/tables.py')\\np.write_text(p.read_text() + '#')\\n"
snippet = execute.Snippet("page.md", "snippets/page/edits.py", source)
plan = execute.Plan({"page.md": [snippet]}, {}, execute.code(), "cpu", Path.cwd() / "store")
try:
    execute.run_plan(plan, 1, say=lambda line: None)
except execute.CodeChanged:
    print("changed", plan.record(snippet).exists())
"""


def test_a_file_edited_while_a_snippet_runs_stores_nothing(tmp_path):
    """A run that may have imported code from both sides of an edit is filed under no key."""
    done = subprocess.run([sys.executable, "-c", EDITING], **_copy_of_the_code(tmp_path))
    assert done.stdout.split() == ["changed", "False"], done.stdout + done.stderr


PROBE = """\
from sdpa.runtime import memo

VALUE = 1


@memo(share=True)
def run(x):
    return VALUE * x
"""


def test_an_engine_s_stored_run_follows_its_code(tmp_path):
    """Stale sequence (2): the shared memo was keyed on arguments and context, not code, so
    a kept folder returned an edited engine's old result. Now the key names the library's
    code as the process runs it: one that imported the engine before an edit goes on
    running (and storing) the old engine under the old code's key."""
    options = _copy_of_the_code(tmp_path)
    options["env"]["PYTHONPATH"] = str(tmp_path / "snippets")
    probe = tmp_path / "snippets" / "sdpa" / "probe.py"
    probe.write_text(PROBE)

    def run(code: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], **options)

    lived_on = run(f"""
        from pathlib import Path
        from sdpa.probe import run
        print(run(2), flush=True)
        Path({str(probe)!r}).write_text(Path({str(probe)!r}).read_text().replace("VALUE = 1", "VALUE = 10"))
        print(run(3))
        """)
    assert lived_on.stdout.split() == ["2", "3"], lived_on.stdout + lived_on.stderr
    assert run("from sdpa.probe import run; print(run(2), run(3))").stdout.split() == ["20", "30"]
    assert len(list((tmp_path / "store" / "memo").rglob("*.pt"))) == 4  # run(2) and run(3) under each code


def test_a_named_site_built_from_other_code_is_refused(tmp_path):
    """``SDPA_BUILT_SITE`` tests a site only while the digests it records (its code, its run's
    context, its sources) are the checkout's: a site built before an edit fails the test."""
    from mkdocs.config import load_config

    from sitebuild import report

    current = report.digests(load_config(str(REPO / "mkdocs.yml")), harness.SESSION.plan)
    (tmp_path / "build-report.json").write_text(json.dumps({"digests": current}))
    assert builds.check_built_site(tmp_path) == []
    (tmp_path / "build-report.json").write_text(json.dumps({"digests": {**current, "code": "0" * 64}}))
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_probe(built_site):\n    pass\n")
    paths = os.pathsep.join(str(path) for path in (REPO / "tests", SNIPPETS, REPO))
    environment = env.environment({"PYTHONPATH": paths, env.BUILT_SITE: str(tmp_path)})
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(probe)], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "was built from other code" in done.stdout and "its code" in done.stdout, (
        done.stdout + done.stderr)


def test_a_failure_is_never_replayed_as_a_result(tmp_path):
    """Stale sequence (3): a failure was stored under its key like a success, so after its
    cause was fixed (a missing file, a package installed) the build and the tests kept
    replaying it until the store was deleted. A failure is shown, never kept as a result."""
    cause = tmp_path / "cause.txt"
    snippet = Snippet("page.md", "snippets/page/reads.py", f"print(open({str(cause)!r}).read())\n")
    plan = Plan({"page.md": [snippet]}, {}, execute.code(), "cpu", tmp_path / "store")
    execute.run_plan(plan, 1, say=lambda line: None)
    assert not plan.record(snippet).exists() or json.loads(plan.record(snippet).read_text())["failure"]
    cause.write_text("fixed")
    execute.run_plan(plan, 1, say=lambda line: None)
    record = json.loads(plan.record(snippet).read_text())
    assert (record["failure"], record["output"]) == (None, "fixed\n")


def test_an_engine_edited_after_the_memo_was_imported_is_run_anew(tmp_path):
    """Stale sequence (4): the memo read its code's digest once, when ``sdpa.runtime`` was
    imported, so a process that imported it, then saw an engine edited (before importing
    the engine), was given the old engine's stored result. The key is the code as the
    process runs it."""
    options = _copy_of_the_code(tmp_path)
    options["env"]["PYTHONPATH"] = str(tmp_path / "snippets")
    probe = tmp_path / "snippets" / "sdpa" / "probe.py"
    probe.write_text(PROBE)

    def run(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], **options)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run("from sdpa.probe import run; print(run(2))") == "2"
    assert run(f"""
        from pathlib import Path
        import sdpa.runtime
        Path({str(probe)!r}).write_text(Path({str(probe)!r}).read_text().replace("VALUE = 1", "VALUE = 10"))
        from sdpa.probe import run
        print(run(2))
        """) == "20"


@pytest.mark.pages("transfer.md", "practice.md")
def test_the_loop_that_trained_a_snippet_is_recorded_while_it_runs(run_snippet):
    """"The loop that trained it" was inferred from the names a snippet's code reaches, so a
    snippet that trains nothing (the gradients at initialisation; the head-count study,
    which only the full profile runs) claimed one. Now an optimiser-step hook records, while
    a snippet runs, the library function that stepped an optimiser, and the memo replays it
    with a result it serves from a run made before."""
    assert run_snippet("transfer/gradients.py").trained == []
    assert run_snippet("practice/folded_training.py").trained == ["sdpa.training.train"]
    trained = run_snippet("practice/head_count_training.py").trained
    assert trained == ([] if env.profile() == "quick" else ["sdpa.training.train"])


SLOW = """\
import time
from pathlib import Path

from sdpa.runtime import memo


@memo(share=True)
def run(x):
    if Path(__file__).with_name("hold").exists():
        print("holding", flush=True)
        time.sleep(600)
    return x
"""


def test_a_lock_whose_holder_died_is_released_by_the_kernel(tmp_path):
    """The memo's lock files once held their holder's process id, and a waiter guessed from
    it whether the holder lived: a dead holder's id that another process had taken since
    was waited on forever. The lock is the kernel's now: it ends with its holder."""
    options = _copy_of_the_code(tmp_path)
    options["env"]["PYTHONPATH"] = str(tmp_path / "snippets")
    probe = tmp_path / "snippets" / "sdpa" / "probe.py"
    probe.write_text(SLOW)
    (probe.parent / "hold").touch()
    holder = subprocess.Popen([sys.executable, "-c", "from sdpa.probe import run; run(1)"], stdout=subprocess.PIPE,
                              text=True, **{k: v for k, v in options.items() if k in ("cwd", "env")})
    assert holder.stdout.readline().strip() == "holding"
    holder.kill()
    holder.wait()
    (probe.parent / "hold").unlink()
    for lock in (tmp_path / "store" / "memo").rglob("*.lock"):
        lock.write_text(str(os.getpid()))  # its process id taken by a live process (this one)
    done = subprocess.run([sys.executable, "-c", "from sdpa.probe import run; print(run(1))"],
                          **{**options, "timeout": 60})
    assert done.stdout.strip() == "1", done.stderr
