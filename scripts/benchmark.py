"""Time the site: a clean build, serial and parallel, every snippet, the serve loop, the tests.

Run from the repository root (not part of the test run), on a quiet machine (the load
average is recorded):

    python scripts/benchmark.py                # everything
    python scripts/benchmark.py --skip-tests   # without the test suite
    python scripts/benchmark.py --isolated     # also each snippet alone, in a fresh process
    python scripts/benchmark.py --serve-only   # only the edit loop of a live mkdocs serve
    SDPA_PROFILE=full python scripts/benchmark.py --build-only   # one clean build (the full
                                               # profile's: just under an hour on 2 cores)

A clean build with ``SDPA_JOBS=1`` gives the serial seconds: every snippet and the lab
notebook, one after another, as its build report times them. A clean build as the README
runs it (one worker per core) gives the wall time. Their ratio is reported against the
target for N workers: wall <= 1.25 x (serial seconds / N) + 4 s.

The edit loop is timed on a live ``mkdocs serve``: a prose edit (``docs/interview.md``)
and a snippet edit (``snippets/derivation/worked_example.py``), three times each, from
saving the file to the server's "Reloading browsers"; the files are put back after.

Writes ``bench/results/benchmark.md`` and ``bench/results/benchmark.json`` (git-ignored)
and prints the Markdown. Targets on the project's 2-core CPU: clean build <= 120 s and
within the ratio above; the suite <= 120 s and its fast tier (``-m "not site"``) <= 60 s;
no snippet over 15 s; under ``mkdocs serve``, a prose edit re-rendered in <= 1.5 s and a
snippet edit in <= 1.5 s plus the snippet's own run.

These machines differ in speed, and one machine's speed drifts by a fifth within minutes.
So a fixed reference workload (:data:`REFERENCE`: a few seconds of small-tensor training on
one thread, in a fresh process, the same on every commit) is timed before and after each
measured command, and every timing is also given as a multiple of it (``x ref``: the
command's wall seconds over the mean of the two reference runs). Quote both.

    python scripts/benchmark.py --claims 0,1   # the claim tests at seed offsets 0 and 1
    python scripts/benchmark.py --tests-only   # the fast tier and the whole suite
"""

from __future__ import annotations

import argparse
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
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "snippets")]  # sitebuild: how many workers a build starts, the device

from sdpa import env as names  # noqa: E402  (the environment, read and written; no torch)
OUT = REPO / "bench" / "results"
TARGETS = {"build_s": 120, "tests_s": 120, "fast_tests_s": 60, "snippet_s": 15, "serve_rebuild_s": 5,
           "serve_edit_s": 1.5}
#: The fast tier of the suite (README, "Working on the site"): no site build.
FAST_TIER = ["-m", "not site"]


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


def calibrated(result: dict, before: float, wall: float | None = None) -> dict:
    """``result`` with the reference workload's seconds before and after it (``before`` and
    a run now), and its wall time (``wall``, default ``result["wall_s"]``) as a multiple of
    their mean."""
    after = reference()
    result["reference_s"] = [before, after]
    result["x_reference"] = round((result["wall_s"] if wall is None else wall) / ((before + after) / 2), 2)
    return result


def busy_seconds() -> float | None:
    """Core-seconds the whole machine has spent busy since boot (Linux), else None."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict | None = None, calibrate: bool = True) -> dict:
    """Run a command; return its wall time, its CPU time, its exit code, the load average
    before it and its output, and (``calibrate``) the reference workload's seconds around
    it (:func:`calibrated`). The CPU time is the machine's busy core-seconds while it ran
    (on a quiet machine, the command's: worker processes, kernels and browsers included),
    else its process tree's as the OS reports it for waited children."""
    before_reference = reference() if calibrate else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = busy_seconds()
    load = round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO, env=names.environment(env), capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if busy is not None:
        cpu = busy_seconds() - busy
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    result = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "returncode": proc.returncode, "load_before": load,
              "output": proc.stdout + proc.stderr}
    return calibrated(result, before_reference) if calibrate else result


def clean_build(site: Path, cache: str = "0", jobs: str | None = None, calibrate: bool = True) -> dict:
    env = {"NO_MKDOCS_2_WARNING": "1", names.CACHE: cache, **({names.JOBS: jobs} if jobs else {})}
    result = timed([sys.executable, "-m", "mkdocs", "build", "--clean", "-q", "-d", str(site)], env, calibrate)
    report = site / "build-report.json"
    result["report"] = json.loads(report.read_text()) if report.is_file() else None
    return result


#: What the serve loop edits: a page's prose, and a snippet (a quick one, so that its own
#: run is small beside the rebuild around it). Both are put back as they were.
PROSE_EDIT = REPO / "docs" / "interview.md"
SNIPPET_EDIT = REPO / "snippets" / "derivation" / "worked_example.py"


class Serve:
    """A real ``mkdocs serve`` on a free port, its log lines read as they come."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = names.environment({"NO_MKDOCS_2_WARNING": "1"}, drop=(names.CACHE,))  # serve's default: cached
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{self.port}"], cwd=REPO, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put((time.perf_counter(), line.rstrip()))

    def wait_for(self, text: str, timeout: float = 600) -> tuple[float, list[str]]:
        """The time the next line holding ``text`` was printed, and the lines up to it."""
        seen, deadline = [], time.perf_counter() + timeout
        while True:
            at, line = self.lines.get(timeout=max(0.1, deadline - time.perf_counter()))
            seen.append(line)
            if text in line:
                return at, seen

    def settle(self, quiet: float = 1.5) -> None:
        """Wait until the server has printed nothing for ``quiet`` seconds (an editor's save
        can make two file events, and so two rebuilds); forget what it printed."""
        while True:
            try:
                self.lines.get(timeout=quiet)
            except queue.Empty:
                return

    def report(self) -> dict:
        url = f"http://127.0.0.1:{self.port}/build-report.json"
        return json.loads(urllib.request.urlopen(url, timeout=10).read())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def serve_loop(rounds: int = 3) -> dict:
    """The edit loop of a live ``mkdocs serve``: seconds from saving an edit to the server's
    "Reloading browsers" (the rebuild done, the page ready to reload), for a prose edit and
    for a snippet edit, each ``rounds`` times; for the snippet edit, also that snippet's
    own seconds in the rebuild (from the build report the server serves)."""
    originals = {path: path.read_text() for path in (PROSE_EDIT, SNIPPET_EDIT)}
    server = Serve()
    results: dict = {"prose_s": [], "snippet_s": [], "snippet_own_s": [], "built_in_s": {}}
    try:
        server.wait_for("Serving on")  # the first build (it fills the cache) is done
        snippet = "snippets/" + SNIPPET_EDIT.relative_to(REPO / "snippets").as_posix()
        for number in range(rounds):
            for kind, path, edit in (("prose", PROSE_EDIT, f"\n<!-- benchmark edit {number} -->\n"),
                                     ("snippet", SNIPPET_EDIT, f"\n# benchmark edit {number}\n")):
                server.settle()
                start = time.perf_counter()
                path.write_text(originals[path] + edit)
                done, seen = server.wait_for("Reloading browsers")  # the first reload after the edit
                results[f"{kind}_s"].append(round(done - start, 2))
                built = [float(m.group(1)) for line in seen if (m := re.search(r"built in ([\d.]+) seconds", line))]
                results["built_in_s"].setdefault(kind, []).extend(built)
                if kind == "snippet":
                    own = [e["seconds"] for e in server.report()["snippets"] if e["snippet"] == snippet]
                    results["snippet_own_s"].append(own[0] if own else None)
    finally:
        for path, text in originals.items():
            path.write_text(text)
        server.stop()
    return results


def isolated_snippets(snippets: list[str]) -> list[dict]:
    """Each snippet in a fresh process, timed after the library (and torch) is imported."""
    driver = (
        "import sys, time, runpy, sdpa; start = time.perf_counter(); "
        "runpy.run_path(sys.argv[1], init_globals={'print': lambda *a, **k: None}); "
        "print(time.perf_counter() - start)"
    )
    env = names.environment({"PYTHONPATH": str(REPO / "snippets")})
    rows = []
    for snippet in snippets:
        proc = subprocess.run([sys.executable, "-c", driver, str(REPO / "snippets" / snippet)],
                              cwd=REPO, env=env, capture_output=True, text=True, check=True)
        rows.append({"snippet": snippet, "wall_s": round(float(proc.stdout.split()[-1]), 2)})
    return rows


def ratio(serial: dict, parallel: dict, workers: int) -> dict:
    """Serial seconds (snippets and notebook, from the SDPA_JOBS=1 build's report), the
    parallel build's wall time, their ratio and the target for ``workers`` workers."""
    report = serial["report"]
    snippets = report["total_seconds"]
    notebooks = round(sum(entry["seconds"] for entry in report.get("notebooks", [])), 2)
    seconds = snippets + notebooks
    bound = round(1.25 * seconds / workers + 4, 2)
    return {"snippet_s": snippets, "notebook_s": notebooks, "serial_s": round(seconds, 2),
            "parallel_wall_s": parallel["wall_s"], "ratio": round(parallel["wall_s"] / seconds, 3),
            "workers": workers, "bound_s": bound, "met": parallel["wall_s"] <= bound}


def slowest_tests(output: str, most: int = 15) -> list[str]:
    """The ``--durations`` lines of a pytest run, slowest first."""
    lines = [line.strip() for line in output.splitlines() if re.match(r"^\d+\.\d+s (call|setup|teardown) ", line)]
    return lines[:most]


def parse_offsets(text: str) -> list[int]:
    """``0,1`` or ``0-3``: the seed offsets to time the claims at."""
    offsets = []
    for part in text.split(","):
        start, _, stop = part.partition("-")
        offsets += range(int(start), int(stop or start) + 1)
    return offsets


def _times(result: dict) -> str:
    """A result's wall seconds and their multiple of the reference workload, as table cells."""
    return f"{result['wall_s']} | {result.get('x_reference', '')}"


def _range(values: list[float], reference: dict) -> str:
    """Edit loop seconds (min-max) and the same as multiples of the reference workload."""
    scale = sum(reference["reference_s"]) / 2
    return (f"{min(values)}–{max(values)} | "
            f"{min(values) / scale:.2f}–{max(values) / scale:.2f}")


def markdown(results: dict) -> str:
    build, serial, share = results["build"], results["serial_build"], results["ratio"]
    lines = [
        f"# Benchmark ({results['machine']})",
        "",
        "| what | wall (s) | × ref | CPU, core-s | load before | target (s) |",
        "| :-- | --: | --: | --: | --: | --: |",
        f"| clean full build, {share['workers']} workers (`mkdocs build`) | {_times(build)} | {build['cpu_s']} | "
        f"{build['load_before']} | {min(TARGETS['build_s'], share['bound_s'])} |",
        f"| clean full build, serial (`SDPA_JOBS=1`) | {_times(serial)} | {serial['cpu_s']} | "
        f"{serial['load_before']} | |",
        f"| rebuild with every snippet cached, a fresh process (`SDPA_CACHE=1 mkdocs build`) | "
        f"{_times(results['serve_rebuild'])} | {results['serve_rebuild']['cpu_s']} | "
        f"{results['serve_rebuild']['load_before']} | {TARGETS['serve_rebuild_s']} |",
    ]
    loop = results.get("serve_loop")
    if loop:
        own = max((s for s in loop["snippet_own_s"] if s is not None), default=0)
        lines += [
            f"| `mkdocs serve`: a prose edit, saved to reloaded ({len(loop['prose_s'])} edits) | "
            f"{_range(loop['prose_s'], loop)} | | | {TARGETS['serve_edit_s']} |",
            f"| `mkdocs serve`: a snippet edit (`{SNIPPET_EDIT.relative_to(REPO).as_posix()}`, its own run "
            f"{min(s for s in loop['snippet_own_s'] if s is not None)}–{own} s) | "
            f"{_range(loop['snippet_s'], loop)} | | | {TARGETS['serve_edit_s']} + its own run |",
        ]
    for key, what, target in (("fast_tests", f"fast tier (`python -m pytest {' '.join(FAST_TIER)}`)",
                               TARGETS["fast_tests_s"]),
                              ("tests", "test suite (`python -m pytest`)", TARGETS["tests_s"])):
        if results.get(key):
            tests = results[key]
            lines.append(f"| {what} | {_times(tests)} | {tests['cpu_s']} | {tests['load_before']} | {target} |")
    if serial["report"]:
        lines += ["", f"The serial build ran {len(serial['report']['snippets'])} snippets and "
                  f"{len(serial['report']['notebooks'])} notebook(s)."]
    lines += [
        "",
        "CPU: the machine's busy core-seconds while the command ran (its worker processes, "
        "notebook kernels and browsers included); on 2 cores a command can take at most twice its wall time.",
        "",
        "× ref: the wall time as a multiple of the reference workload (`REFERENCE` in scripts/benchmark.py: "
        "2,500 Adam steps of a small network on one thread), timed in a fresh process before and after each "
        "row's command; its seconds: "
        + ", ".join(f"{key} {'/'.join(map(str, run['reference_s']))}" for key, run in results.items()
                    if isinstance(run, dict) and "reference_s" in run) + ".",
        "",
        f"Serial seconds (the `SDPA_JOBS=1` build's report): snippets {share['snippet_s']} + lab notebook "
        f"{share['notebook_s']} = {share['serial_s']} s. Parallel wall {share['parallel_wall_s']} s: ratio "
        f"{share['ratio']}; target 1.25 x ({share['serial_s']} / {share['workers']}) + 4 = {share['bound_s']} s: "
        + ("met." if share["met"] else "**not met**."),
    ]
    snippets = sorted(serial["report"]["snippets"], key=lambda r: -r["seconds"]) if serial["report"] else []
    isolated = {r["snippet"]: r["wall_s"] for r in results.get("isolated", [])}
    lines += ["", "Snippets in the serial build, slowest first (an experiment memoised for several "
              "snippets is paid by the first that runs it):", "",
              "| snippet | page | seconds in build |" + (" seconds alone, fresh process |" if isolated else ""),
              "| :-- | :-- | --: |" + (" --: |" if isolated else "")]
    per_page: dict[str, float] = {}
    for r in snippets:
        per_page[r["page"]] = per_page.get(r["page"], 0) + r["seconds"]
        name = r["snippet"].removeprefix("snippets/")
        lines.append(f"| {name} | {r['page']} | {r['seconds']:.2f} |"
                     + (f" {isolated.get(name, float('nan')):.2f} |" if isolated else ""))
    for entry in serial["report"]["notebooks"] if serial["report"] else []:
        per_page[entry["page"]] = entry["seconds"]
    lines += ["", "| page (a worker's job) | serial seconds |", "| :-- | --: |"]
    lines += [f"| {page} | {seconds:.1f} |" for page, seconds in sorted(per_page.items(), key=lambda kv: -kv[1])]
    if results.get("tests"):
        lines += ["", "Slowest tests:", "", "```text", *results["tests"]["slowest"], "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    parser.add_argument("--isolated", action="store_true", help="also time each snippet in a fresh process")
    parser.add_argument("--serve-only", action="store_true",
                        help="only the edit loop of a live mkdocs serve (and a cached rebuild)")
    parser.add_argument("--build-only", action="store_true",
                        help="only one clean parallel build, in the profile SDPA_PROFILE names "
                        "(the way to time the full profile), and its slowest pages; the site is "
                        "kept in bench/results/site-PROFILE")
    parser.add_argument("--tests-only", action="store_true",
                        help="only the two tiers of the test suite (the fast tier, then the whole suite)")
    parser.add_argument("--claims", metavar="OFFSETS",
                        help="only the claim tests (`python -m pytest -m claims --seed-offset N`, the profile "
                        "SDPA_PROFILE names) at each of these seed offsets (0,1 or 0-3), one process each")
    args = parser.parse_args()

    from sitebuild.cache import device, environment
    from sitebuild.pool import workers

    described = environment(device())
    results: dict = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, device "
                   f"{described['device']}, profile {described['profile']}, torch {described['torch']}, "
                   f"Python {described['python']}",
    }
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=15"]
    if args.tests_only:
        tiers = {"fast_tests": timed(pytest + FAST_TIER, {"NO_MKDOCS_2_WARNING": "1"}),
                 "tests": timed(pytest, {"NO_MKDOCS_2_WARNING": "1"})}
        for run in tiers.values():
            run["slowest"] = slowest_tests(run.pop("output"))
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "tests.json").write_text(json.dumps({"machine": results["machine"], **tiers}, indent=1))
        print(json.dumps(tiers, indent=1))
        return
    if args.claims:
        claims = {}
        for offset in parse_offsets(args.claims):
            run = timed([sys.executable, "-m", "pytest", "-m", "claims", "-q", "-p", "no:cacheprovider",
                         "--seed-offset", str(offset)], {"NO_MKDOCS_2_WARNING": "1"})
            run["summary"] = run.pop("output").strip().splitlines()[-1:]
            claims[offset] = run
            print(f"offset {offset}: {json.dumps(run)}", flush=True)
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"claims-{described['profile']}.json").write_text(json.dumps({"machine": results["machine"],
                                                                             "offsets": claims}, indent=1))
        return
    if args.build_only:
        build = clean_build(OUT / f"site-{described['profile']}")  # kept, to be looked at
        report = build.pop("report") or {"snippets": [], "notebooks": []}
        pages: dict[str, float] = {}
        for entry in report["snippets"] + report["notebooks"]:
            pages[entry["page"]] = pages.get(entry["page"], 0) + entry["seconds"]
        build.pop("output", None)
        build["pages"] = dict(sorted(pages.items(), key=lambda kv: -kv[1]))
        build["machine"] = results["machine"]
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"build-{described['profile']}.json").write_text(json.dumps(build, indent=1))
        print(json.dumps(build, indent=1))
        return
    with tempfile.TemporaryDirectory() as tmp:
        if not args.serve_only:
            # Serial first: its report gives the serial seconds, and the parallel build after it
            # orders its pages by them (.cache/schedule.json), as a contributor's next build does.
            results["serial_build"] = clean_build(Path(tmp) / "serial", jobs="1")
            results["build"] = clean_build(Path(tmp) / "site")
            results["ratio"] = ratio(results["serial_build"], results["build"], workers())
        # Fill the cache (.cache/snippets) once, then time a rebuild in a fresh process in
        # which nothing changed; then the real thing: edits under a live `mkdocs serve`.
        clean_build(Path(tmp) / "warm", cache="1", calibrate=False)
        results["serve_rebuild"] = clean_build(Path(tmp) / "warm", cache="1")
    before = reference()
    results["serve_loop"] = serve_loop()
    results["serve_loop"]["reference_s"] = [before, reference()]
    if args.serve_only:
        print(json.dumps({k: results[k] for k in ("serve_rebuild", "serve_loop")}, indent=1, default=str))
        return
    if args.isolated and results["serial_build"]["report"]:
        snippets = [r["snippet"].removeprefix("snippets/") for r in results["serial_build"]["report"]["snippets"]]
        results["isolated"] = isolated_snippets(snippets)
    if not args.skip_tests:
        results["fast_tests"] = timed(pytest + FAST_TIER, {"NO_MKDOCS_2_WARNING": "1"})
        results["tests"] = timed(pytest, {"NO_MKDOCS_2_WARNING": "1"})
        results["tests"]["slowest"] = slowest_tests(results["tests"]["output"])
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
