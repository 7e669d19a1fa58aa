"""Run the claim tests on many independent seed blocks and table, per claim, its margin.

A claim must hold for any seed (docs DESIGN, claim contract). Every seed the site draws from
is below ``sdpa.env.SEED_BLOCK`` (10,000,000) before the seed offset is added, so the offset
``b * SEED_BLOCK`` moves every snippet and experiment onto seeds that no other block uses:
block ``b`` is an independent draw of every run. (Consecutive offsets are not: offset 1 of a
study on seeds 0-4 reuses four of its five seeds.) This script runs ``pytest -m claims
--seed-offset b*SEED_BLOCK`` once per block, each in its own process, reading and filling the
store (``SDPA_STORE``, else ``.cache/store``), whose keys name the offset. It reads each
run's JUnit XML and prints a Markdown table: every claim test (its node id), the blocks it
passed on, the blocks where it failed and the first line of the failure's message; then each
recorded claim's margin, its slack's mean over its standard deviation across the blocks, and
how many independent blocks that margin rests on. Run it from anywhere; it tests the
repository it lives in:

    python scripts/claims_sweep.py --blocks 1-10                 # quick profile, serial
    python scripts/claims_sweep.py --blocks 1-10 --jobs 2        # two blocks at a time
    python scripts/claims_sweep.py --blocks 1,2,3 --profile full
    python scripts/claims_sweep.py --blocks 1-10 tests/test_tuning.py   # extra pytest args
    python scripts/claims_sweep.py --blocks 1-10 tests/test_qk_norm.py::test_head_entropy_collapse

With pytest arguments (a test file, a test, ``-k``), each block passes ``--only-read``: only
the snippets the chosen tests read run, each when a test reads it, not every snippet of
their pages.
    python scripts/claims_sweep.py --blocks 11-20 --record --settled-on "offsets 0-19, blocks 1-10"
    python scripts/claims_sweep.py --blocks 11-20 --from bench/results/claims-sweep --record ...

Words are settled on one set of blocks and certified, unchanged, on another that did not
shape them: ``--record`` (the whole claims suite only) writes the certifying sweep's summary
for the profile into the committed ``bench/records/claims-sweeps.json`` with what the words
were settled on (``--settled-on``) and the digest of every file the claims depend on
(:func:`claims.claim_sources`); a test fails when one of them has changed since.

It is slow (one to two minutes of CPU per block in quick): start it at a low priority,
``nice -n 19 python scripts/claims_sweep.py ...``. The table is also written to
``bench/results/claims-sweep.md`` (``--out`` to change it; git-ignored), rewritten after
each block so that a running sweep can be read, and each block's JUnit XML (the full
failure messages) to ``bench/results/claims-sweep/block-B.xml``. A block whose run
crashes (no XML, a collection error, an exit code other than 0 or 1) is reported as
such, with the tail of its output, and the script exits 1; it also exits 1 when any claim
failed on any block, 0 when every claim passed on every block. ``--from FOLDER`` tables
a finished sweep from its kept ``block-B.xml`` instead of running one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import shlex
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "snippets"))  # sdpa.env: the variables' names (no torch)

sys.path.insert(0, str(REPO / "tests"))  # claims: how a recorded claim is read

from claims import claim_sources, recorded, slack  # noqa: E402
from sdpa import env as names  # noqa: E402

OUT = REPO / "bench" / "results" / "claims-sweep.md"
RECORD = REPO / "bench" / "records" / "claims-sweeps.json"
MESSAGE_CHARS = 140
#: A claim whose margin (standard deviations over the blocks) is under this is flagged.
MARGIN = 3.0


def parse_blocks(text: str) -> list[int]:
    """``1-10``, ``1,5,9`` or ``1-4,100``: the blocks, in order, without repeats."""
    blocks: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        start, dash, stop = part.partition("-")
        values = range(int(start), int(stop) + 1) if dash else [int(start)]
        blocks.extend(v for v in values if v not in blocks)
    if not blocks:
        raise argparse.ArgumentTypeError(f"no blocks in {text!r}")
    return blocks


@dataclass
class Run:
    block: int
    returncode: int
    seconds: float
    outcomes: dict[str, tuple[str, str]] = field(default_factory=dict)  # nodeid -> (outcome, message)
    claims: dict[str, list[dict]] = field(default_factory=dict)  # nodeid -> the claims it recorded
    crash: str = ""  # why this block's results are missing or incomplete

    @property
    def offset(self) -> int:
        """The seed offset that moves every seed onto this block."""
        return self.block * names.SEED_BLOCK


def nodeid(case: ET.Element) -> str:
    """A JUnit test case's pytest node id (``tests/test_x.py::test_y[param]``)."""
    classname, name = case.get("classname", ""), case.get("name", "")
    parts = classname.split(".")
    # classname is the module path with dots (tests.test_x), then any class names.
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (REPO / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}"


def short(message: str) -> str:
    """The first informative line of an assertion message, trimmed for a table cell."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    line = next((x for x in lines if x.startswith(("AssertionError", "assert", "E "))), lines[0] if lines else "")
    line = line.replace("|", "\\|")
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def read_junit(path: Path) -> tuple[dict[str, tuple[str, str]], dict[str, list[dict]]]:
    """Each test's outcome and message, and the claims it recorded (its ``claim`` properties)."""
    outcomes: dict[str, tuple[str, str]] = {}
    claims: dict[str, list[dict]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        pairs = [(p.get("name", ""), p.get("value", "")) for p in case.iter("property")]
        claims[nodeid(case)] = recorded(pairs)
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = "failed" if tag == "failure" else tag
                message = found.get("message") or (found.text or "")
                break
        outcomes[nodeid(case)] = (outcome, short(message))
    return outcomes, claims


def run_block(block: int, profile: str, pytest_args: list[str], keep: Path) -> Run:
    """One block's claim tests in a fresh pytest process; its JUnit XML is kept in ``keep``
    (the full failure messages, with the values the assertions compared)."""
    with tempfile.TemporaryDirectory(prefix=f"claims-sweep-{block}-") as folder:
        xml = Path(folder) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-m", "claims", "-p", "no:cacheprovider", "-q",
                   "--seed-offset", str(block * names.SEED_BLOCK), f"--junitxml={xml}",
                   *(["--only-read"] if pytest_args else []), *pytest_args]
        env = names.environment({names.PROFILE: profile})
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
            returncode, output = proc.returncode, proc.stdout + proc.stderr
        except OSError as error:
            returncode, output = -1, f"could not start pytest: {error}"
        run = Run(block, returncode, time.perf_counter() - start)
        try:
            run.outcomes, run.claims = read_junit(xml)
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"block-{block}.xml").write_bytes(xml.read_bytes())
        except (OSError, ET.ParseError) as error:
            run.crash = f"no JUnit XML ({type(error).__name__})"
    # pytest: 0 all passed, 1 some failed; anything else (interrupted, internal or usage
    # error, no tests collected, killed by a signal) means the run itself went wrong.
    errors = [n for n, (outcome, _) in run.outcomes.items() if outcome == "error"]
    if returncode not in (0, 1) or errors:
        why = f"exit code {returncode}" + (f", {len(errors)} errors" if errors else "")
        run.crash = f"{run.crash}; {why}" if run.crash else why
    if run.crash:
        tail = " / ".join(line for line in output.strip().splitlines()[-3:])
        run.crash += f": {short(tail)}"
    failed = sum(outcome not in ("passed", "skipped") for outcome, _ in run.outcomes.values())
    status = run.crash or f"{len(run.outcomes)} tests, {failed} failed"
    print(f"block {block}: {status} ({run.seconds:.0f} s)", file=sys.stderr, flush=True)
    return run


def table(runs: list[Run], profile: str, pytest_args: list[str]) -> tuple[str, bool]:
    """The Markdown report, and whether every claim passed on every block with no crash."""
    blocks = [r.block for r in runs]
    nodeids = sorted({n for r in runs for n in r.outcomes})
    lines = [
        f"# Claims on {len(runs)} independent seed blocks ({profile} profile)",
        "",
        f"Blocks: {format_blocks(blocks)}. Command per block B: `pytest -m claims --seed-offset "
        f"B*{names.SEED_BLOCK}" + (f" {shlex.join(pytest_args)}" if pytest_args else "")
        + f"` with `SDPA_PROFILE={profile}` (every seed below {names.SEED_BLOCK:,} before the offset: "
        "no two blocks share a seed).",
        "",
    ]
    crashed = [r for r in runs if r.crash]
    if crashed:
        lines += ["## Blocks whose run went wrong", "", "| block | what happened |", "|---:|---|"]
        lines += [f"| {r.block} | {r.crash} |" for r in crashed]
        lines += [""]
    rows, clean = [], not crashed
    for node in nodeids:
        passed, failed, skipped, messages = 0, [], 0, {}
        for r in runs:
            outcome, message = r.outcomes.get(node, ("missing", "not run (see the blocks that went wrong)"))
            if outcome == "passed":
                passed += 1
            elif outcome == "skipped":
                skipped += 1
            else:
                failed.append(r.block)
                messages.setdefault(message, r.block)
        counted = len(runs) - skipped
        if failed:
            clean = False
        first = min(messages, key=messages.get) if messages else ""
        rows.append((-len(failed), node, f"| `{node}` | {passed}/{counted} | {format_blocks(failed)} | {first} |"))
    failing = [row for row in sorted(rows) if row[0] < 0]
    lines += [f"{len(nodeids)} claim tests; {len(failing)} failed on some block.", ""]
    lines += ["| claim test | passed | failed on blocks | first failure's message |", "|---|---:|---|---|"]
    lines += [row[2] for row in sorted(rows)]
    lines += ["", *margins(runs, nodeids)]
    lines += ["", "Seconds per block: " + ", ".join(f"{r.block}: {r.seconds:.0f}" for r in runs) + "."]
    return "\n".join(lines) + "\n", clean


def margin(slacks: list[float]) -> float:
    """Mean over standard deviation (over the blocks) of a claim's slack, the statistic's
    distance to its threshold on the passing side: positive when it passes on average;
    +-inf when the slack never moves (a deterministic statistic), nan with one block."""
    mean = sum(slacks) / len(slacks)
    if len(slacks) < 2:
        return math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in slacks) / (len(slacks) - 1))
    if sd == 0 or sd < 1e-12 * abs(mean):
        return math.copysign(math.inf, mean) if mean else 0.0
    return mean / sd


def per_claim(runs: list[Run], nodeids: list[str]) -> dict[tuple[str, str], list[dict]]:
    """Each recorded claim (its test and name) with its records on every block."""
    found: dict[tuple[str, str], list[dict]] = {}
    for node in nodeids:
        for entry in (e for r in runs for e in r.claims.get(node, [])):
            found.setdefault((node, entry["name"]), []).append(entry)
    return found


def margins(runs: list[Run], nodeids: list[str]) -> list[str]:
    """The margins table: one row per recorded claim, the thinnest first."""
    claims = per_claim(runs, nodeids)
    silent = [node for node in nodeids if not any(n == node for n, _ in claims)
              and any(r.outcomes.get(node, ("",))[0] in ("passed", "failed") for r in runs)]
    rows = []
    for (node, name), entries in claims.items():
        slacks = [slack(e) for e in entries]
        value = margin(slacks)
        stats = [e["statistic"] for e in entries]
        thresholds = {e["threshold"] for e in entries}
        threshold = (f"{entries[0]['threshold']:.4g}" if len(thresholds) == 1
                     else f"{min(thresholds):.4g} to {max(thresholds):.4g}")
        side = ">" if entries[0]["direction"] == "above" else "<"
        if entries[0].get("log"):
            threshold += ", log scale"
        flag = "" if value >= MARGIN else " **under 3**"
        shown = "exact" if math.isinf(value) and value > 0 else f"{value:.1f}"
        rows.append((value if not math.isnan(value) else -math.inf, node, name,
                     f"| `{node}` | {name.replace('|', '/')} | {len(entries)} | {min(stats):.4g} to "
                     f"{max(stats):.4g} | {side} {threshold} | {min(slacks):.3g} | {shown}{flag} |"))
    thin = sum(row[0] < MARGIN for row in rows)
    lines = ["## Margins", "",
             f"{len(rows)} recorded claims; {thin} with a margin under {MARGIN:g} standard deviations "
             "(mean slack / its SD over the blocks, each block an independent draw of every seed; slack = "
             "the statistic's distance to its threshold, positive on the passing side, between logarithms "
             "for a claim on the log scale; `exact`: a statistic that did not move).", "",
             "| claim test | claim | blocks | statistic | must be | least slack | margin |",
             "|---|---|---:|---|---|---:|---:|"]
    lines += [row[3] for row in sorted(rows, key=lambda row: (row[0], row[1], row[2]))]
    if silent:
        lines += ["", f"Claim tests that recorded no statistic ({len(silent)}): "
                  + ", ".join(f"`{node}`" for node in silent) + "."]
    return lines


def format_blocks(blocks: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8'."""
    spans: list[list[int]] = []
    for value in sorted(blocks):
        if spans and value == spans[-1][1] + 1:
            spans[-1][1] = value
        else:
            spans.append([value, value])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans) or "-"


def split_arguments(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """This script's options, and every other argument for pytest in its order (argparse's
    own parse_known_args would separate ``-p plugin`` into ``plugin`` and ``-p``)."""
    own = {option: action for action in parser._actions for option in action.option_strings}
    mine, rest, args = [], [], iter(argv)
    for arg in args:
        if arg == "--":
            rest.extend(args)
        elif arg.split("=", 1)[0] in own:
            mine.append(arg)
            if "=" not in arg and own[arg].nargs != 0:
                mine.append(next(args, ""))
        else:
            rest.append(arg)
    return parser.parse_args(mine), rest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=parse_blocks, default=parse_blocks("1-10"),
                        help="seed blocks: 1-10, 1,5,9 or 1-4,100; block B is seed offset "
                             f"B*{names.SEED_BLOCK} (default 1-10)")
    parser.add_argument("--profile", choices=("quick", "full"), default="quick",
                        help="the experiments' size, passed as SDPA_PROFILE (default quick)")
    parser.add_argument("--jobs", type=int, default=1, help="blocks run at once (default 1)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write the table (default {OUT})")
    parser.add_argument("--from", dest="kept", type=Path, metavar="FOLDER",
                        help="table a finished sweep from FOLDER/block-B.xml instead of running one")
    parser.add_argument("--record", action="store_true", help=f"write the sweep's summary into {RECORD} "
                        "(the whole claims suite only)")
    parser.add_argument("--settled-on", default="", metavar="TEXT",
                        help="with --record: the blocks (or offsets) the words were settled on, none of "
                             "them among --blocks")
    parser.add_argument("pytest_args", nargs="*", help="any other argument goes to pytest, in order "
                        "(test files, -k EXPR, -p PLUGIN); put pytest's after --")
    args, pytest_args = split_arguments(parser, sys.argv[1:] if argv is None else argv)
    if args.record and pytest_args:
        parser.error("--record summarises the whole claims suite: give no pytest arguments")
    if args.record and not args.settled_on:
        parser.error("--record needs --settled-on: the blocks the words were settled on")
    keep = args.out.with_suffix("")  # bench/results/claims-sweep/block-B.xml
    args.out.parent.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    for block in args.blocks if args.kept else []:
        runs.append(Run(block, 0, 0.0))
        runs[-1].outcomes, runs[-1].claims = read_junit(args.kept / f"block-{block}.xml")
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_block, b, args.profile, pytest_args, keep) for b in args.blocks if not args.kept]
        for future in as_completed(futures):
            runs.append(future.result())
            runs.sort(key=lambda r: r.block)
            # The table so far, after every block: a long sweep can be read while it runs.
            args.out.write_text(table(runs, args.profile, pytest_args)[0])
    report, clean = table(runs, args.profile, pytest_args)
    args.out.write_text(report)
    print(report, end="")
    if args.record:
        record(runs, args.profile, args.settled_on)
    return 0 if clean else 1


def record(runs: list[Run], profile: str, settled_on: str) -> None:
    """The certifying sweep's summary for ``profile`` in :data:`RECORD` (the other profile's
    kept): its blocks, what the words were settled on, its counts and smallest margin, and the
    digest of every file the claims depend on (a test compares them with the checkout's)."""
    nodeids = sorted({n for r in runs for n in r.outcomes})
    values = [margin([slack(e) for e in entries]) for entries in per_claim(runs, nodeids).values()]
    failed = {n for r in runs for n, (outcome, _) in r.outcomes.items() if outcome not in ("passed", "skipped")}
    try:
        kept = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        kept = {}
    kept[profile] = {"date": datetime.date.today().isoformat(), "blocks": sorted(r.block for r in runs),
                     "seed_block": names.SEED_BLOCK, "settled_on": settled_on,
                     "tests": len(nodeids), "claims": len(values), "failed": len(failed),
                     "crashed": sum(bool(r.crash) for r in runs),
                     "under": sum(v < MARGIN for v in values if not math.isnan(v)),
                     "min_margin": min((v for v in values if not math.isnan(v)), default=math.nan),
                     "sources": claim_sources()}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
