"""Time the site: a clean build, a build from the store, the suite's two tiers, the edit loop, the full profile.

Run from the repository root (not part of the test run), on a quiet machine (the load
average is recorded):

    python scripts/benchmark.py                # the quick profile: builds, both tiers, the edit loop
    python scripts/benchmark.py --skip-tests   # without the test suite
    python scripts/benchmark.py --tests-only   # only the fast tier and the whole suite
    python scripts/benchmark.py --serve-only   # only the edit loop of a live mkdocs serve (the store of
                                               # the checkout; with --keep DIR an empty one)
    python scripts/benchmark.py --claims 0,1   # the claim tests at seed offsets 0 and 1
    python scripts/benchmark.py --full         # the full profile: a clean build, then its claims
                                               # on the same store (about an hour on 2 cores)
    python scripts/benchmark.py --publish      # the publishing workflow's steps, as written, on a
                                               # clean clone of HEAD in a fresh environment
    python scripts/benchmark.py --publish --store DIR  # the same from a warm store (its cache)

Every timing starts from an empty store (``SDPA_STORE``, a fresh folder), as on a fresh
clone, except the rows that say they read one: the build again on the store the clean build
filled (what ``mkdocs build`` costs once nothing changed), the suite after that build (the
contributor's loop), and the full profile's claims, which read the full build's store (one
computation, as the publishing workflow does). ``--publish`` runs that workflow's build job
itself (``.github/workflows/publish.yml``: each ``run`` step in order, with the job's
environment) on a clean clone of the commit checked out, its install step in a fresh virtual
environment; GitHub's own actions (checkout, setup-python, the upload) are not run. ``--full``
and ``--publish`` also write the committed record ``bench/records/full-build.json`` that the
*Build report* page reads.

Targets on the project's 2-core CPU: the quick clean build <= 40 s, the suite <= 120 s,
its fast tier (``-m "not site"``) <= 60 s; the full build and its claims <= 60 minutes; the
publishing workflow, its install included, <= 75 minutes.

These machines differ in speed, and one machine's speed drifts by a fifth within minutes.
So a fixed reference workload (:data:`REFERENCE`: a few seconds of small-tensor training on
one thread, in a fresh process, the same on every commit) is timed before and after each
measured command, and every timing is also given as a multiple of it (``x ref``: the
command's wall seconds over the mean of the two reference runs). Quote both.

Writes ``bench/results/benchmark.md`` and ``.json`` (git-ignored) and prints the Markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import queue
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "snippets")]

from sdpa import env as names  # noqa: E402  (the environment, read and written; no torch)

OUT = REPO / "bench" / "results"
RECORDS = REPO / "bench" / "records"
TARGETS = {"build": 40, "fast_tests": 60, "tests": 120, "full": 3600, "publish": 4500, "edit": 1.5}
WORKFLOW = REPO / ".github" / "workflows" / "publish.yml"
#: The fast tier of the suite, as the README gives it.
FAST_TIER = ["-m", "not site"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=15"]

#: The reference workload: 2,500 Adam steps of a 32-64-1 tanh network on 256 fixed points, on
#: one thread. It imports torch only (not the site's library), so it is the same workload on
#: every commit. It prints the seconds of its training loop (torch's import not counted).
REFERENCE = """
import time, torch
torch.set_num_threads(1)
generator = torch.Generator().manual_seed(0)
x, y = torch.randn(256, 32, generator=generator), torch.randn(256, 1, generator=generator)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
start = time.perf_counter()
for _ in range(2500):
    loss = torch.nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(time.perf_counter() - start)
"""


def reference() -> float:
    """The seconds of one run of :data:`REFERENCE`, in a fresh process."""
    done = subprocess.run([sys.executable, "-c", REFERENCE], capture_output=True, text=True, check=True)
    return round(float(done.stdout.split()[-1]), 2)


def busy_seconds() -> float | None:
    """Core-seconds the whole machine has spent busy since boot (Linux), else None."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait


def timed(command: list[str], cwd: Path = REPO, **env: str) -> dict:
    """Run a command; return its wall time, its CPU time (the machine's busy core-seconds
    while it ran: on a quiet machine, the command's, workers, kernels and browsers included;
    else its process tree's), its exit code, the load average before it, its output, and the
    reference workload's seconds around it with the wall time as a multiple of their mean."""
    before_reference = reference()
    rusage, busy, load = resource.getrusage(resource.RUSAGE_CHILDREN), busy_seconds(), round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=names.environment({"NO_MKDOCS_2_WARNING": "1", **env}),
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = busy_seconds() - busy if busy is not None else (
        after.ru_utime - rusage.ru_utime + after.ru_stime - rusage.ru_stime)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    references = [before_reference, reference()]
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "returncode": proc.returncode, "load_before": load,
            "reference_s": references, "x_reference": round(wall / (sum(references) / 2), 2),
            "output": proc.stdout + proc.stderr}


def build(site: Path, store: Path, **env: str) -> dict:
    """A clean build into ``site`` reading (and filling) ``store``, with its build report."""
    result = timed([sys.executable, "-m", "mkdocs", "build", "--clean", "-d", str(site)],
                   **{names.STORE: str(store), **env})
    report = site / "build-report.json"
    result["report"] = json.loads(report.read_text()) if report.is_file() else None
    return result


def publish(root: Path, store: Path | None = None) -> tuple[dict[str, dict], Path]:
    """The publishing workflow's build job as written: a clean clone of HEAD in ``root``, a
    fresh virtual environment, then each ``run`` step of the job in order, with the job's
    environment; each step timed, stopping at the first that fails. ``store``: a copy of it
    is the job's store, as its cache step restores one (else the store starts empty). The
    steps by name, and the store they filled."""
    import shutil

    import yaml

    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]
    clone, steps = root / "clone", {}
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    if store is not None:
        shutil.copytree(store, clone / job["env"][names.STORE])
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
    venv = {"VIRTUAL_ENV": str(clone / ".venv"),
            "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{names.environment()['PATH']}"}
    for step in job["steps"]:
        if "run" in step:
            steps[step["name"]] = timed(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=clone,
                                        **venv, **{k: str(v) for k, v in job.get("env", {}).items()})
            steps[step["name"]]["run"] = step["run"]
            print(f"{step['name']}: {steps[step['name']]['wall_s']} s", flush=True)
            if steps[step["name"]]["returncode"]:
                break
    return steps, clone / job["env"][names.STORE]


def write_record(build: dict, claims: dict, store: Path, **more) -> None:
    """``bench/records/full-build.json``: a full build and its claims, read by the build report."""
    RECORDS.mkdir(parents=True, exist_ok=True)
    (RECORDS / "full-build.json").write_text(json.dumps({
        "date": datetime.date.today().isoformat(), "profile": "full", "cores": os.cpu_count(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "build_s": build["wall_s"], "claims_s": claims["wall_s"], "reference_s": build["reference_s"],
        "passed": build["returncode"] == claims["returncode"] == 0, **more,
        # each job's seconds, which an empty store's build orders its jobs by
        "seconds": json.loads((store / "seconds.json").read_text())}, indent=1) + "\n")


def pages(result: dict) -> dict[str, float]:
    """A build's seconds per page (its snippets' and the notebook's, as they ran), slowest first."""
    seconds: dict[str, float] = {}
    for entry in (result.get("report") or {}).get("snippets", []) + (result.get("report") or {}).get("notebooks", []):
        seconds[entry["page"]] = round(seconds.get(entry["page"], 0) + entry["seconds"], 2)
    return dict(sorted(seconds.items(), key=lambda kv: -kv[1]))


#: What the edit loop edits: a page's prose, and a snippet (a quick one, so that its own run
#: is small beside the rebuild around it). Both are put back as they were.
PROSE_EDIT = REPO / "docs" / "interview.md"
SNIPPET_EDIT = REPO / "snippets" / "derivation" / "worked_example.py"


#: The edit loop the README recommends: every page whose inputs changed is rendered again.
SERVE = ["mkdocs", "serve", "--dirty", "--no-strict"]


class Serve:
    """A real :data:`SERVE` (the README's loop) on a free port, its log lines read as they come."""

    def __init__(self, store: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", *SERVE, "-a", f"127.0.0.1:{self.port}"],
            cwd=REPO, text=True,
            env=names.environment({"NO_MKDOCS_2_WARNING": "1", names.STORE: str(store)}), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put((time.perf_counter(), line.rstrip()))
                                         for line in self.process.stdout], daemon=True).start()

    def wait_for(self, text: str, timeout: float = 900) -> float:
        """The time the next line holding ``text`` was printed."""
        deadline = time.perf_counter() + timeout
        while True:
            at, line = self.lines.get(timeout=max(0.1, deadline - time.perf_counter()))
            if text in line:
                return at

    def settle(self, quiet: float = 1.5) -> None:
        """Wait until the server has printed nothing for ``quiet`` seconds (an editor's save
        can make two file events, and so two rebuilds)."""
        while True:
            try:
                self.lines.get(timeout=quiet)
            except queue.Empty:
                return

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def serve_loop(store: Path, rounds: int = 3) -> dict:
    """The edit loop of a live :data:`SERVE`: seconds from saving an edit to the server's
    "Reloading browsers", for a prose edit and a snippet edit, ``rounds`` times each, then
    the edit put back; after each, whether the page served shows what was saved (a page
    that does not is stale)."""
    import urllib.request

    originals = {path: path.read_text() for path in (PROSE_EDIT, SNIPPET_EDIT)}
    pages = {PROSE_EDIT: "interview/", SNIPPET_EDIT: "derivation/"}
    server, results = Serve(store), {"prose_s": [], "snippet_s": [], "stale": 0, "reference_s": [reference()]}
    try:
        server.wait_for("Serving on")
        for number in range(rounds):
            for kind, path, edit in (("prose", PROSE_EDIT, f"\nBenchmark edit {number}.\n"),
                                     ("snippet", SNIPPET_EDIT, f"\n# benchmark edit {number}\n")):
                for text in (originals[path] + edit, originals[path]):  # the edit, then its revert
                    server.settle()
                    start = time.perf_counter()
                    path.write_text(text)
                    seconds = round(server.wait_for("Reloading browsers") - start, 2)
                    results[f"{kind}_s"].append(seconds)
                    page = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/{pages[path]}").read().decode()
                    results["stale"] += (edit.strip().lstrip("# ") in page) != (text != originals[path])
    finally:
        for path, text in originals.items():
            path.write_text(text)
        server.stop()
    results["reference_s"].append(reference())
    return results


def parse_offsets(text: str) -> list[int]:
    """``0,1`` or ``0-3``: the seed offsets to time the claims at."""
    offsets = []
    for part in text.split(","):
        start, _, stop = part.partition("-")
        offsets += range(int(start), int(stop or start) + 1)
    return offsets


def row(what: str, result: dict | None, target: float | str = "") -> str | None:
    if not result:
        return None
    status = "" if result["returncode"] == 0 else " (**failed**)"
    return (f"| {what}{status} | {result['wall_s']} | {result['x_reference']} | {result['cpu_s']} | "
            f"{result['load_before']} | {target} |")


def markdown(results: dict) -> str:
    lines = [f"# Benchmark ({results['machine']})", "",
             "| what | wall (s) | × ref | CPU, core-s | load before | target (s) |",
             "| :-- | --: | --: | --: | --: | --: |"]
    for key, what, target in (
            ("build", "quick clean build, empty store (`mkdocs build`)", TARGETS["build"]),
            ("rebuild", "the build again, on its store (nothing runs)", ""),
            ("fast_tests", f"fast tier, empty store (`python -m pytest {' '.join(FAST_TIER)}`)", TARGETS["fast_tests"]),
            ("tests", "suite, empty store (`python -m pytest`)", TARGETS["tests"]),
            ("tests_after_build", "suite after the build, on its store", ""),
            ("full_build", "full clean build, empty store (`SDPA_PROFILE=full mkdocs build`)", ""),
            ("full_claims", "its claims, on its store (`SDPA_PROFILE=full python -m pytest -m claims`)", "")):
        lines.append(row(what, results.get(key), target))
    lines += [row(f"claims at seed offset {key.removeprefix('claims_')}, empty store", run)
              for key, run in results.items() if key.startswith("claims_")]
    if results.get("full_build") and results.get("full_claims"):
        total = round(results["full_build"]["wall_s"] + results["full_claims"]["wall_s"], 1)
        lines.append(f"| full build and its claims together | {total} | | | | {TARGETS['full']} |")
    steps = results.get("publish") or {}
    lines += [row(f"publishing workflow: {name}", run) for name, run in steps.items()]
    if steps:
        total = round(sum(run["wall_s"] for run in steps.values()), 1)
        lines.append(f"| the publishing workflow's steps together | {total} | | | | {TARGETS['publish']} |")
    loop = results.get("serve_loop")
    if loop:
        ref = sum(loop["reference_s"]) / len(loop["reference_s"])
        lines += [f"| `{' '.join(SERVE)}`: a {kind} edit or its revert, saved to reloaded ({len(loop[f'{kind}_s'])} "
                  f"saves, {loop['stale']} stale pages of all) | {min(loop[f'{kind}_s'])}–{max(loop[f'{kind}_s'])} | "
                  f"{min(loop[f'{kind}_s']) / ref:.2f}–{max(loop[f'{kind}_s']) / ref:.2f} | | | "
                  f"{TARGETS['edit'] if kind == 'prose' else ''} |" for kind in ("prose", "snippet")]
    lines = [line for line in lines if line is not None]
    lines += ["", "CPU: the machine's busy core-seconds while the command ran; on 2 cores a command can take at "
              "most twice its wall time. × ref: the wall time over the reference workload's seconds "
              "(`REFERENCE` in scripts/benchmark.py), timed before and after each row: "
              + ", ".join(f"{key} {'/'.join(map(str, run['reference_s']))}"
                          for key, run in [*results.items(), *(results.get("publish") or {}).items()]
                          if isinstance(run, dict) and "reference_s" in run) + "."]
    for key in ("build", "full_build"):
        if results.get(key):
            lines += ["", f"Seconds per page, {key.replace('_', ' ')} (the sum of its snippets' seconds; "
                      "each snippet is a job of its own):",
                      "", "| page | seconds |", "| :-- | --: |"]
            lines += [f"| {page} | {seconds} |" for page, seconds in pages(results[key]).items()]
    for key in [key for key in results if key == "tests" or key.startswith("claims_")]:
        if results[key].get("slowest"):
            lines += ["", f"Slowest tests ({key}):", "", "```text", *results[key]["slowest"], "```"]
    return "\n".join(lines) + "\n"


def slowest(output: str, most: int = 15) -> list[str]:
    """The ``--durations`` lines of a pytest run, slowest first."""
    return [line.strip() for line in output.splitlines() if re.match(r"^\d+\.\d+s (call|setup|teardown) ", line)][:most]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    parser.add_argument("--tests-only", action="store_true", help="only the fast tier and the whole suite")
    parser.add_argument("--serve-only", action="store_true", help="only the edit loop of a live mkdocs serve")
    parser.add_argument("--claims", metavar="OFFSETS", help="only the claim tests (`python -m pytest -m claims "
                        "--seed-offset N`, the profile SDPA_PROFILE names) at these offsets (0,1 or 0-3)")
    parser.add_argument("--full", action="store_true", help="the full profile: a clean build, then its claims on "
                        "its store; writes bench/records/full-build.json")
    parser.add_argument("--publish", action="store_true", help="the publishing workflow's steps on a clean clone "
                        "of HEAD, a fresh environment; writes bench/records/full-build.json")
    parser.add_argument("--store", metavar="DIR", type=Path, help="with --publish: start from a copy of this "
                        "store, as the workflow's cache step restores the last run's (a warm store)")
    parser.add_argument("--keep", metavar="DIR", type=Path, help="build into DIR and keep it (its store and site), "
                        "instead of a folder deleted at the end: a long run's results outlive it")
    args = parser.parse_args()
    from sitebuild.execute import device
    from sitebuild.execute import store as execute_store

    results: dict = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, device "
                                f"{device()}, profile {'full' if args.full or args.publish else names.profile()}, "
                                f"Python {platform.python_version()}"}
    with contextlib.ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sdpa-benchmark-")))
        if args.full:
            full = {names.PROFILE: "full"}
            results["full_build"] = build(root / "site", root / "full-store", **full)
            results["full_claims"] = timed(PYTEST + ["-m", "claims"], **{names.STORE: str(root / "full-store"), **full})
            write_record(results["full_build"], results["full_claims"], root / "full-store")
        elif args.publish:
            steps, store = publish(root, args.store)
            results["publish"] = steps
            built, claimed = (next((run for run in steps.values() if command in run["run"]), None)
                              for command in ("mkdocs build", "-m claims"))
            if built and claimed and args.store is None:  # the record is of a build from an empty store
                write_record(built, claimed, store, workflow_s=round(sum(r["wall_s"] for r in steps.values()), 1),
                             steps={name: run["wall_s"] for name, run in steps.items()})
        elif args.claims:
            for offset in parse_offsets(args.claims):
                run = timed(PYTEST + ["-m", "claims", "--seed-offset", str(offset)], **{names.STORE: str(root / "s")})
                run["slowest"] = slowest(run["output"])
                results[f"claims_{offset}"] = run
                print(f"offset {offset}: {run['wall_s']} s, {run['output'].strip().splitlines()[-1:]}", flush=True)
        elif args.serve_only:  # on the checkout's store (as a contributor's), or an empty one with --keep
            results["serve_loop"] = serve_loop(root / "serve-store" if args.keep else Path(execute_store()))
        else:
            if not args.tests_only:
                results["build"] = build(root / "site", root / "store")
                results["rebuild"] = build(root / "site", root / "store")
            if not args.skip_tests:
                results["fast_tests"] = timed(PYTEST + FAST_TIER, **{names.STORE: str(root / "fast-store")})
                results["tests"] = timed(PYTEST, **{names.STORE: str(root / "suite-store")})
                results["tests"]["slowest"] = slowest(results["tests"]["output"])
                if not args.tests_only:
                    results["tests_after_build"] = timed(PYTEST, **{names.STORE: str(root / "store")})
            if not args.tests_only:
                results["serve_loop"] = serve_loop(root / "store")
    for run in results.values():
        if isinstance(run, dict):
            run.pop("output", None)
    OUT.mkdir(parents=True, exist_ok=True)
    text = markdown(results)
    (OUT / "benchmark.md").write_text(text)
    (OUT / "benchmark.json").write_text(json.dumps(results, indent=1))
    print(text)


if __name__ == "__main__":
    main()
