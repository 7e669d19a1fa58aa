"""Time the site: a clean build, serial and parallel, every snippet, the serve loop, the tests.

Run from the repository root (not part of the test run), on a quiet machine (the load
average is recorded):

    python scripts/benchmark.py                # everything
    python scripts/benchmark.py --skip-tests   # without the test suite
    python scripts/benchmark.py --isolated     # also each snippet alone, in a fresh process

A clean build with ``SDPA_JOBS=1`` gives the serial seconds: every snippet and the lab
notebook, one after another, as its build report times them. A clean build as the README
runs it (one worker per core) gives the wall time. Their ratio is reported against the
target for N workers: wall <= 1.25 x (serial seconds / N) + 4 s.

Writes ``bench/results/benchmark.md`` and ``bench/results/benchmark.json`` (git-ignored)
and prints the Markdown. Targets on the project's 2-core CPU: clean build <= 120 s and
within the ratio above, test suite <= 90 s, no snippet over 15 s, a prose-only rebuild
under ``mkdocs serve`` <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # sitebuild: how many workers a build starts, the device; sdpa.env
OUT = REPO / "bench" / "results"
TARGETS = {"build_s": 120, "tests_s": 90, "snippet_s": 15, "serve_rebuild_s": 5}


def busy_seconds() -> float | None:
    """Core-seconds the whole machine has spent busy since boot (Linux), else None."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict | None = None) -> dict:
    """Run a command; return its wall time, its CPU time, its exit code, the load average
    before it and its output. The CPU time is the machine's busy core-seconds while it ran
    (on a quiet machine, the command's: worker processes, kernels and browsers included),
    else its process tree's as the OS reports it for waited children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = busy_seconds()
    load = round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if busy is not None:
        cpu = busy_seconds() - busy
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "returncode": proc.returncode, "load_before": load,
            "output": proc.stdout + proc.stderr}


def clean_build(site: Path, cache: str = "0", jobs: str | None = None) -> dict:
    from sdpa import env as names

    env = {"NO_MKDOCS_2_WARNING": "1", names.CACHE: cache, **({names.JOBS: jobs} if jobs else {})}
    result = timed([sys.executable, "-m", "mkdocs", "build", "--clean", "-q", "-d", str(site)], env)
    report = site / "build-report.json"
    result["report"] = json.loads(report.read_text()) if report.is_file() else None
    return result


def isolated_snippets(snippets: list[str]) -> list[dict]:
    """Each snippet in a fresh process, timed after the library (and torch) is imported."""
    driver = (
        "import sys, time, runpy, sdpa; start = time.perf_counter(); "
        "runpy.run_path(sys.argv[1], init_globals={'print': lambda *a, **k: None}); "
        "print(time.perf_counter() - start)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "snippets")}
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


def markdown(results: dict) -> str:
    build, serial, share = results["build"], results["serial_build"], results["ratio"]
    lines = [
        f"# Benchmark ({results['machine']})",
        "",
        "| what | wall (s) | CPU, core-s | load before | target (s) |",
        "| :-- | --: | --: | --: | --: |",
        f"| clean full build, {share['workers']} workers (`mkdocs build`) | {build['wall_s']} | {build['cpu_s']} | "
        f"{build['load_before']} | {min(TARGETS['build_s'], share['bound_s'])} |",
        f"| clean full build, serial (`SDPA_JOBS=1`) | {serial['wall_s']} | {serial['cpu_s']} | "
        f"{serial['load_before']} | |",
        f"| rebuild with every snippet cached (what `mkdocs serve` does after a prose edit) | "
        f"{results['serve_rebuild']['wall_s']} | {results['serve_rebuild']['cpu_s']} | "
        f"{results['serve_rebuild']['load_before']} | {TARGETS['serve_rebuild_s']} |",
    ]
    if results.get("tests"):
        tests = results["tests"]
        lines.append(f"| test suite (`python -m pytest`) | {tests['wall_s']} | {tests['cpu_s']} | "
                     f"{tests['load_before']} | {TARGETS['tests_s']} |")
    lines += [
        "",
        "CPU: the machine's busy core-seconds while the command ran (its worker processes, "
        "notebook kernels and browsers included); on 2 cores a command can take at most twice its wall time.",
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
    args = parser.parse_args()

    from sitebuild.cache import device, environment
    from sitebuild.pool import workers

    described = environment(device())
    results: dict = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, device "
                   f"{described['device']}, profile {described['profile']}, torch {described['torch']}, "
                   f"Python {described['python']}",
    }
    with tempfile.TemporaryDirectory() as tmp:
        # Serial first: its report gives the serial seconds, and the parallel build after it
        # orders its pages by them (.cache/schedule.json), as a contributor's next build does.
        results["serial_build"] = clean_build(Path(tmp) / "serial", jobs="1")
        results["build"] = clean_build(Path(tmp) / "site")
        results["ratio"] = ratio(results["serial_build"], results["build"], workers())
        # The serve loop: fill the cache (.cache/snippets) once, then time a rebuild in which
        # nothing but prose changed, which is what `mkdocs serve` does after a prose edit.
        clean_build(Path(tmp) / "warm", cache="1")
        results["serve_rebuild"] = clean_build(Path(tmp) / "warm", cache="1")
    if args.isolated and results["serial_build"]["report"]:
        snippets = [r["snippet"].removeprefix("snippets/") for r in results["serial_build"]["report"]["snippets"]]
        results["isolated"] = isolated_snippets(snippets)
    if not args.skip_tests:
        results["tests"] = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=15"],
                                 {"NO_MKDOCS_2_WARNING": "1"})
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
