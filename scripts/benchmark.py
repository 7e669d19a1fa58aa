"""Time the site: a clean full build, every snippet, the notebook, the serve loop, the tests.

Run from the repository root (not part of the test run):

    python scripts/benchmark.py                # everything
    python scripts/benchmark.py --skip-tests   # without the test suite
    python scripts/benchmark.py --isolated     # also each snippet alone, in a fresh process

Writes ``bench/results/benchmark.md`` and ``bench/results/benchmark.json`` (git-ignored)
and prints the Markdown. Targets on the project's 2-core CPU: clean build <= 120 s, test
suite <= 240 s, no snippet over 15 s, a prose-only rebuild under ``mkdocs serve`` <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results"
TARGETS = {"build_s": 120, "tests_s": 240, "snippet_s": 15, "serve_rebuild_s": 5}


def timed(command: list[str], env: dict | None = None) -> dict:
    """Run a command; return its wall time, the CPU time of its process tree and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "returncode": proc.returncode}


def clean_build(site: Path, cache: str = "0") -> dict:
    env = {"NO_MKDOCS_2_WARNING": "1", "SDPA_CACHE": cache}
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


def notebook() -> dict | None:
    lab = REPO / "docs" / "lab.py"
    if not lab.is_file():
        return None
    code = (
        "import jupytext, nbclient; nb = jupytext.read('docs/lab.py'); "
        "nbclient.NotebookClient(nb, timeout=600, kernel_name='python3', "
        "resources={'metadata': {'path': 'docs'}}).execute()"
    )
    return timed([sys.executable, "-c", code])


def markdown(results: dict) -> str:
    build, lines = results["build"], []
    lines += [
        f"# Benchmark ({results['machine']})",
        "",
        "| what | wall (s) | CPU (s) | target (s) |",
        "| :-- | --: | --: | --: |",
        f"| clean full build | {build['wall_s']} | {build['cpu_s']} | {TARGETS['build_s']} |",
        f"| rebuild with every snippet cached (what `mkdocs serve` does after a prose edit) | "
        f"{results['serve_rebuild']['wall_s']} | {results['serve_rebuild']['cpu_s']} | {TARGETS['serve_rebuild_s']} |",
    ]
    if results.get("notebook"):
        notebook = results["notebook"]
        lines.append(f"| lab notebook, executed alone | {notebook['wall_s']} | {notebook['cpu_s']} | |")
    if results.get("tests"):
        tests = results["tests"]
        lines.append(f"| test suite (`python -m pytest`) | {tests['wall_s']} | {tests['cpu_s']} | "
                     f"{TARGETS['tests_s']} |")
    snippets = sorted(build["report"]["snippets"], key=lambda r: -r["seconds"]) if build["report"] else []
    isolated = {r["snippet"]: r["wall_s"] for r in results.get("isolated", [])}
    lines += ["", "Snippets in the clean build, slowest first (an experiment memoised for several "
              "snippets is paid by the first that runs it):", "",
              "| snippet | page | seconds in build |" + (" seconds alone, fresh process |" if isolated else ""),
              "| :-- | :-- | --: |" + (" --: |" if isolated else "")]
    per_page: dict[str, float] = {}
    for r in snippets:
        per_page[r["page"]] = per_page.get(r["page"], 0) + r["seconds"]
        name = r["snippet"].removeprefix("snippets/")
        lines.append(f"| {name} | {r['page']} | {r['seconds']:.2f} |"
                     + (f" {isolated.get(name, float('nan')):.2f} |" if isolated else ""))
    lines += ["", "| page | snippet seconds |", "| :-- | --: |"]
    lines += [f"| {page} | {seconds:.1f} |" for page, seconds in sorted(per_page.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-tests", action="store_true", help="do not time the test suite")
    parser.add_argument("--isolated", action="store_true", help="also time each snippet in a fresh process")
    args = parser.parse_args()

    import torch

    device = os.environ.get("SDPA_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    results: dict = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, device {device}, "
                   f"torch {torch.__version__}, Python {platform.python_version()}",
    }
    with tempfile.TemporaryDirectory() as tmp:
        results["build"] = clean_build(Path(tmp) / "site")
        # The serve loop: fill the cache (.cache/snippets) once, then time a rebuild in which
        # nothing but prose changed, which is what `mkdocs serve` does after a prose edit.
        clean_build(Path(tmp) / "warm", cache="1")
        results["serve_rebuild"] = clean_build(Path(tmp) / "warm", cache="1")
    if args.isolated and results["build"]["report"]:
        snippets = [r["snippet"].removeprefix("snippets/") for r in results["build"]["report"]["snippets"]]
        results["isolated"] = isolated_snippets(snippets)
    results["notebook"] = notebook()
    if not args.skip_tests:
        results["tests"] = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                                 {"NO_MKDOCS_2_WARNING": "1"})
    OUT.mkdir(parents=True, exist_ok=True)
    text = markdown(results)
    (OUT / "benchmark.md").write_text(text)
    (OUT / "benchmark.json").write_text(json.dumps(results, indent=1))
    print(text)


if __name__ == "__main__":
    main()
