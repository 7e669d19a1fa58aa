"""The claims plugin (tests/claims.py) and the sweep's margins (scripts/claims_sweep.py)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest
from claims import PROPERTY, Claims, paired_t, recorded, slack, t_cdf, t_interval, t_quantile
from conftest import REPO


def sweep_module():
    spec = importlib.util.spec_from_file_location("claims_sweep", REPO / "scripts" / "claims_sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_t_quantiles_match_the_printed_table():
    # Two-sided 95% and 99% points of Student's t (any statistics table, e.g. NIST/SEMATECH 1.3.6.7.2)
    table = {1: (12.706, 63.657), 2: (4.303, 9.925), 3: (3.182, 5.841), 4: (2.776, 4.604),
             9: (2.262, 3.250), 19: (2.093, 2.861), 100: (1.984, 2.626)}
    for df, (t95, t99) in table.items():
        assert t_quantile(0.975, df) == pytest.approx(t95, abs=6e-4)
        assert t_quantile(0.995, df) == pytest.approx(t99, abs=6e-4)
        assert t_quantile(0.025, df) == -t_quantile(0.975, df)
    assert t_cdf(0.0, 7) == 0.5 and t_cdf(1e9, 3) == pytest.approx(1.0)
    assert t_quantile(0.975, 2000) == pytest.approx(1.96115, abs=1e-4)  # near the normal's 1.95996
    with pytest.raises(ValueError):
        t_cdf(1.0, 2.5)


def test_paired_interval_uses_the_differences():
    a, b = [1.0, 2.0, 3.0, 4.0], [0.5, 1.4, 2.6, 3.3]
    interval = paired_t(a, b)
    diffs = [x - y for x, y in zip(a, b)]
    mean, sd = sum(diffs) / 4, math.sqrt(sum((d - 0.55) ** 2 for d in diffs) / 3)
    assert interval.mean == pytest.approx(mean) and interval.n == 4
    assert interval.low == pytest.approx(mean - 3.182446 * sd / 2, rel=1e-6)
    assert interval.high - interval.mean == pytest.approx(interval.mean - interval.low)
    assert t_interval([1.0, 1.0, 1.0]).low == 1.0
    with pytest.raises(ValueError):
        paired_t([1.0, 2.0], [1.0])


def test_a_claim_records_what_it_compared_and_asserts_it():
    properties: list = []
    claim = Claims(properties)
    claim.above("a", 2.0, 1.0)
    claim.near("b", 1.05, 1.0, rel=0.1)
    interval = claim.paired_above("c", [2.0, 3.0, 2.5], [1.0, 1.9, 1.6])
    with pytest.raises(AssertionError, match="'d'"):
        claim.below("d", 5.0, 4.0)
    entries = recorded(properties)
    assert all(name == PROPERTY for name, _ in properties)
    assert [e["name"] for e in entries] == ["a", "b (low)", "b (high)", "c", "d"]
    assert entries[3]["statistic"] == interval.low and entries[3]["threshold"] == 0.0
    assert entries[-1] == {"name": "d", "statistic": 5.0, "threshold": 4.0, "direction": "below"}
    assert [slack(e) for e in entries] == pytest.approx([1.0, 0.15, 0.05, interval.low, -1.0])
    with pytest.raises(ValueError, match="twice"):
        claim.above("a", 3.0, 1.0)
    claim.above("ratio", 1e6, 1e3, log=True)
    assert slack(recorded(properties)[-1]) == pytest.approx(math.log(1e3))
    with pytest.raises(ValueError, match="positive"):
        claim.below("negative ratio", -1.0, 2.0, log=True)
    json.dumps(entries)  # what the JUnit property holds


def test_the_sweep_reads_claims_from_junit_and_reports_margins(tmp_path):
    sweep = sweep_module()
    xml = tmp_path / "junit.xml"
    runs = []
    for offset, value in enumerate([2.0, 2.2, 1.8, 2.1]):
        entries = [{"name": "x", "statistic": value, "threshold": 1.0, "direction": "above"},
                   {"name": "fixed", "statistic": 0.0, "threshold": 1.0, "direction": "below"}]
        props = "".join(f'<property name="{PROPERTY}" value="{json.dumps(e).replace(chr(34), "&quot;")}"/>'
                        for e in entries)
        xml.write_text('<testsuites><testsuite><testcase classname="tests.test_claims" name="test_t">'
                       f"<properties>{props}</properties></testcase></testsuite></testsuites>")
        run = sweep.Run(offset, 0, 1.0)
        run.outcomes, run.claims = sweep.read_junit(xml)
        runs.append(run)
    node = "tests/test_claims.py::test_t"
    assert runs[0].claims[node][0]["statistic"] == 2.0
    slacks = [1.0, 1.2, 0.8, 1.1]
    sd = math.sqrt(sum((s - 1.025) ** 2 for s in slacks) / 3)
    assert sweep.margin(slacks) == pytest.approx(1.025 / sd)
    assert sweep.margin([1.0, 1.0]) == math.inf and sweep.margin([-1.0, -1.0]) == -math.inf
    report, clean = sweep.table(runs, "quick", [])
    assert clean and "## Margins" in report
    row = next(line for line in report.splitlines() if "| x |" in line)
    assert f"{1.025 / sd:.1f}" in row and "under 3" not in row
    assert "| fixed | 4 |" in report and "exact" in report
