"""The tuned-comparisons page: the plane's identity, its design, and every claim, each with
the statistic it rests on (the ``claim`` fixture records it for the margin report).

Final losses spread over orders of magnitude, so two settings are compared as the ratio of
their losses on the same seeds: the paired t interval of the difference of log losses.
"A ends higher than B" means that interval's lower end lies above 0. Every threshold is the
sentence's own (0, or a ratio of 1): no band is invented.
"""

from __future__ import annotations

import pytest

from sdpa.attention import Scale
from sdpa.plane import SETTING_LABELS, SETTINGS, rule_step, settings_table
from sdpa.sizes import SIZES, sizes
from sdpa.stats import chance_note, paired
from sdpa.training import OPTIMIZER_LABELS

from harness import DOCS

PLANE = sizes().plane
SPREADS = sizes().spreads
BUDGETS = sizes().budgets
BLOCK = sizes().block_plane


@pytest.fixture(scope="module")
def planes(run_snippet):
    return run_snippet("tuning/plane_table.py").namespace["result"]["planes"]


def test_the_design_is_what_the_page_says():
    quick, full = SIZES["quick"].plane, SIZES["full"].plane
    for plane in (quick, full):
        assert plane.steps == 150 and plane.warmup == 0.1 and plane.last == 8
        assert plane.record_every == 5 and plane.per_decade == 3
        assert not set(plane.choose_seeds) & set(plane.confirm_seeds), "fresh seeds"
        for optimizer in plane.optimizers:
            for d_k in plane.d_ks:
                points = plane.points(optimizer, d_k)
                assert all(rule_step(rule, optimizer) in points for rule in Scale)
    # "5 x 8 points under each optimiser, w from -2 to 5 under Adam and -1 to 6 under SGD,
    # eight rates, three choice seeds, seven fresh"
    assert [len(full.points(o, 64)) for o in ("adam", "sgd")] == [40, 40]
    assert {w for _, w in full.points("adam", 64)} == set(range(-2, 6))
    assert {w for _, w in full.points("sgd", 64)} == set(range(-1, 7))
    assert full.grid_d_ks == full.d_ks == (16, 64, 256) and full.rates == 8
    assert (len(full.choose_seeds), len(full.confirm_seeds)) == (3, 7)
    # "3 x 3 points through the rules' defaults at d_k = 64, three rates on two seeds"
    assert quick.grid_d_ks == quick.d_ks == (64,)
    assert [len(quick.points(o, 64)) for o in ("adam", "sgd")] == [9, 9]
    assert quick.rates == 3 and (len(quick.choose_seeds), len(quick.confirm_seeds)) == (2, 7)
    # the rules' points, as the page's table gives them
    assert [rule_step(r, "adam") for r in Scale] == [(0, 0), (1, 1), (2, 2)]
    assert [rule_step(r, "sgd") for r in Scale] == [(0, 0), (1, 2), (2, 4)]
    block = SIZES["full"].block_plane
    assert block.heads == 4 and block.grid_d_ks == (16, 64) and block.rates == 7
    assert [len(block.points(o, 64)) for o in ("adam", "sgd")] == [25, 35]
    # the setup boxes say these sizes: tests/test_setup_boxes.py


def test_every_rule_is_a_point_of_the_plane_bit_for_bit(run_snippet):
    """The identity, run by the plain loop at every shared rate of the window: bit for bit
    where d_k^(1/4) is a power of two; at d_k = 64, within float rounding (a few units in
    the last place of a loss near 1) at the lowest rate, which the page says."""
    namespace = run_snippet("tuning/identity.py").namespace
    rows, compared, nan = namespace["result"]["rates"], namespace["compared"], float("nan")
    # a rate where both runs diverge (the full window's highest) agrees there, bit for bit
    assert compared([1.0, nan], [1.0, nan]) == (0.0, True) and compared([1.0, nan], [1.0, 2.0])[1] is False
    assert {(r["optimizer"], r["d_k"]) for r in rows} == {(o, d) for o in ("adam", "sgd") for d in (16, 64)}
    for row in rows:
        assert row["rates"] == len(PLANE.lrs(row["optimizer"]))
        if row["d_k"] in (16, 256):
            assert row["identical"] and row["largest_difference"] == 0, row
        else:
            assert row["lowest_rate_difference"] < 1e-5, row


def test_global_norm_clipping_breaks_the_identity_only_where_it_binds(run_snippet):
    """"breaks the identity whenever the clip binds ... A clip that never binds changes
    nothing": at d_k = 16, where the identity is exact, a clip at norm 1 binds and the runs
    part by more than float rounding could; a clip at norm 100 never binds and they agree
    bit for bit. The printed line says which, with the counts."""
    run = run_snippet("tuning/identity.py")
    rows = run.namespace["result"]["clipped"]
    assert {(r["optimizer"], r["clip"]) for r in rows} == {(o, t) for o in ("adam", "sgd") for t in (1.0, 100.0)}
    for row in rows:
        if row["clip"] == 1.0:
            assert row["binds"] > 0 and row["largest_difference"] > 1e-3 and not row["identical"], row
        else:
            assert row["binds"] == 0 and row["largest_norm"] < 100 and row["identical"], row
    page = " ".join((DOCS / "tuning.md").read_text(encoding="utf-8").split())
    assert "breaks the identity whenever the clip binds" in page
    assert run.output.count("never binds") == 2 and run.output.count("the runs part") == 2


#: The unscaled-start claims hold from a starting spread of 8 on: unit-variance q and k
#: without the factor start with a spread of sqrt(d_k), so from d_k = 64 on (issue 36).
WIDE = 64

# The page's training sentences are kind (b): its snippets print them, in words their
# intervals decide (the tests "..._say_what_the_intervals_show" check the words). The
# claims below, stated before the runs, keep the quick build's words from turning at any
# seed offset: swept at offsets 0-19 with 3-SD margins. The full profile's plane is not
# swept at three offsets (about 100 minutes an offset on 2 cores), so there they are not
# claims (issue 36, item 2): the full build's words are what its intervals say.
QUICK_ONLY = pytest.mark.profiles("quick")


@pytest.mark.claims
@QUICK_ONLY
def test_the_unscaled_default_ends_higher_than_the_scaled_one(planes, claim):
    """The list under the plane's table, its first line: from unit-variance weights, at d_k >= 64 (a
    starting spread of 8 or more), the unscaled default ends higher than 1/sqrt(d_k)'s
    default under both optimisers, each at its own best shared rate (fresh seeds, paired:
    the lower end of the t interval of the log ratio above 0)."""
    for (optimizer, d_k), r in planes.items():
        if d_k >= WIDE:
            ratio = paired(r.confirm["none"], r.confirm["inv_sqrt"], log=True)
            claim.above(f"{optimizer}, d_k = {d_k}: log(none / 1/sqrt(d_k)), lower end",
                        ratio.low, 0)


@pytest.mark.claims
@QUICK_ONLY
def test_no_rate_rescues_the_unscaled_start(planes, claim):
    """The list under the plane's table, its second line: at d_k >= 64, where the grid was measured,
    the best point of the u = 0 column (its W_Q/W_K rate and its shared rate chosen on the
    choice seeds) ends higher than 1/sqrt(d_k)'s default at its own best shared rate, on
    the fresh seeds (paired: the lower end of the t interval of the log ratio above 0).
    Since the plane's best point is at least as good as that default, this is the stronger
    of the two comparisons; its partner is a fixed point, not one picked as the best (whose
    fresh-seed loss carries the winner's curse and, at the quick grid's edge, more noise)."""
    checked = 0
    for (optimizer, d_k), r in planes.items():
        if d_k >= WIDE and d_k in PLANE.grid_d_ks:
            ratio = paired(r.confirm["column"], r.confirm["inv_sqrt"], log=True)
            claim.above(f"{optimizer}, d_k = {d_k}: log(best of u = 0 / 1/sqrt(d_k)), lower end",
                        ratio.low, 0)
            checked += 1
    assert checked >= 2, "the claim needs both optimisers at a wide head size"


@pytest.mark.claims
@QUICK_ONLY
def test_the_starting_spread_decides_what_dropping_the_factor_costs(run_snippet, claim):
    """The line under the spreads: from unit variance (a spread of 8) and wider, the
    unscaled head ends higher than the scaled head from the same weights (paired by seed
    on the fresh seeds, as a ratio: one stuck seed widens the difference in nats but not
    the ratio's interval)."""
    points = run_snippet("tuning/starting_spread.py").namespace["result"]
    wide = [p for p in points if p["spread"] >= 8]
    assert wide, "no spread of 8 or more was measured"
    for p in wide:
        claim.above(f"spread {p['spread']:.3g}: log(none / 1/sqrt(d_k)), lower end",
                    p["log_ratio"].low, 0)


def test_the_line_under_the_spreads_says_what_the_intervals_show(run_snippet):
    """Each spread is named in the clause its ratio's interval puts it in."""
    run = run_snippet("tuning/starting_spread.py")
    line = run.output.rpartition("95% t intervals of the ratio): ")[2].split(".\n")[0]
    clauses = {}
    for clause in line.split("; "):
        words, _, spreads = clause.rpartition(" at ")
        clauses[words] = spreads.split(", ")
    for p in run.namespace["result"]:
        r = p["log_ratio"]
        words = ("the head without the factor ends higher" if r.low > 0 else
                 "the head without the factor ends lower" if r.high < 0 else
                 "the fresh seeds do not tell the two apart")
        assert f"{p['spread']:.3g}" in clauses.get(words, []), (p["spread"], line)


def test_the_line_under_the_budgets_says_what_the_intervals_show(run_snippet):
    """Each setting's words at each budget (in its cell of the table) follow from its
    interval against the best point alone; the window and the settings come from the study."""
    run = run_snippet("tuning/budgets.py")
    rows, budgets = run.namespace["result"], run.namespace["BUDGETS"]
    assert budgets[0] == PLANE.steps and list(budgets[1:]) == list(BUDGETS.budgets)
    text = run.output
    shifts = ", ".join(f"{k:+d}" for k in BUDGETS.shifts)
    assert f"grid steps of {shifts} " in text
    for row in (r for r in rows if r["setting"] != "best"):
        for steps in budgets:
            ratio = row["at"][steps]["ratio"]
            words = ("some runs diverged" if ratio is None else "above the best point"
                     if ratio.low > 0 else "below the best point" if ratio.high < 0
                     else "not told apart")
            cells = next([c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
                         if line.startswith(f"| {OPTIMIZER_LABELS[row['optimizer']]} | {row['d_k']} | "
                                            f"{SETTING_LABELS[row['setting']]} |"))
            cell = cells[3 + list(budgets).index(steps)]
            assert cell.endswith(f": {words}"), (row, steps, cells)
            assert ("(stability)" in cell) == row["at"][steps]["stability"], (row, steps, cells)
    intervals = sum(at["ratio"] is not None for r in rows for at in r["at"].values())
    assert chance_note(intervals) in text


@pytest.mark.claims
@QUICK_ONLY
def test_the_block_without_the_factor_ends_above_the_scaled_block(run_snippet, claim):
    """The list under the block's table: at every head size and optimiser measured, the block
    without the factor ends higher than the scaled block (fresh seeds, paired log ratio)."""
    planes = run_snippet("tuning/block.py").namespace["result"]
    for (optimizer, d_k), r in planes.items():
        ratio = paired(r.confirm["none"], r.confirm["inv_sqrt"], log=True)
        claim.above(f"block, {optimizer}, d_k = {d_k}: log(none / 1/sqrt(d_k)), lower end",
                    ratio.low, 0)


@pytest.mark.claims
@QUICK_ONLY
def test_a_learned_scale_falls_rather_than_grows(run_snippet, claim):
    """The list under the learned scale's table, which prints per row in how many runs the
    scale ends below its start: above the best rate the learned scale falls rather than grows,
    in most of the runs that trained. Under Adam at two grid steps above; under SGD at one (at
    two, every run diverges on most seed blocks, which left the claim empty there). Most runs
    must train, so that the claim is never about no run at all. (The runs' geometric mean end /
    start below one had a margin of 3.3-3.6 over three sweeps of independent blocks, 3.4 over
    36 of them pooled: the share of runs, always 1 over 86 stored draws, replaced it.)"""
    rows = {(r["optimizer"], r["steps_above"]): r
            for r in run_snippet("tuning/learned_scale.py").namespace["result"] if r["learned"]}
    for optimizer, steps in (("adam", 2), ("sgd", 1)):
        r = rows[(optimizer, steps)]
        kept = ~r["diverged"]
        claim.above(f"{optimizer}, {steps} grid steps above: runs that trained, of {len(kept)}",
                    int(kept.sum()), len(kept) / 2)
        claim.above(f"{optimizer}, {steps} grid steps above: share of trained runs that end below the start",
                    (r["scale_ratio"][kept] < 1).float().mean().item(), 0.5)


def test_every_confirmed_setting_is_reported(planes):
    for r in planes.values():
        assert set(r.settings) == set(r.confirm) == set(SETTINGS)
        assert all(len(loss) == len(PLANE.confirm_seeds) for loss in r.confirm.values())


def test_the_reading_says_what_the_intervals_show(run_snippet):
    """The table under the plane's settings classifies each default by its interval alone."""
    run = run_snippet("tuning/plane_table.py")
    planes = run.namespace["result"]["planes"]
    for row, ((optimizer, d_k), r) in zip(run.namespace["reading"](planes), planes.items()):
        assert row[:2] == (OPTIMIZER_LABELS[optimizer], d_k)
        assert f"| {row[0]} | {d_k} | {row[2]} | {row[3]} | {row[4]} |" in run.output, row
        for name in ("none", "inv_sqrt", "inv"):
            v = r.versus_best(name)
            label = SETTING_LABELS[name]
            above, below = v is None or v.low > 0, v is not None and v.high < 0
            assert (f"{label} ×" in row[3] or f"{label} (some" in row[3]) == above, (row, name)
            assert (f"{label} ×" in row[4]) == below, (row, name)
            assert (label in row[2].split(", ")) == (not above and not below), (row, name)


def test_the_settings_table_marks_every_setting_on_an_edge(planes):
    """The settings table marks "(edge)" every setting whose shared rate is an end of its
    window, or whose point is on the grid's edge (the full build's u = 0 column at d_k = 256
    under Adam is): where the plane did not reach, the table says so."""
    edges = sum(not r.interior(name) for r in planes.values() for name in SETTINGS
                if name != "column" or len(r.points) > 3)  # the column's row: a grid's alone
    table = settings_table(PLANE, planes)
    rows = [line for line in table.splitlines() if line.startswith("|")]
    assert sum(row.count("(edge)") for row in rows) == edges
    # "(stability)": the chosen rate sits just below one that diverged at its point
    limits = sum(r.stability(name) for r in planes.values() for name in SETTINGS
                 if name != "column" or len(r.points) > 3)
    assert sum(row.count("(stability)") for row in rows) == limits
    # the caption says how many intervals it prints and what chance alone would do with them
    intervals = sum(r.versus_best(name) is not None and r.settings[name] != r.settings["best"]
                    for r in planes.values() for name in SETTINGS
                    if name != "best" and (name != "column" or len(r.points) > 3))
    assert chance_note(intervals) in table


@pytest.mark.parametrize("snippet", ["tuning/plane_table.py", "tuning/block.py"])
def test_the_unscaled_start_is_read_as_its_intervals_say(run_snippet, snippet):
    """Each line of the list ``sdpa.tuning.unscaled_reading`` prints: the unscaled default,
    and where the grid was measured the u = 0 column's best, each against the 1/sqrt(d_k)
    default in the words its own interval decides."""
    run = run_snippet(snippet)
    plane = run.namespace["PLANE"]
    results = run.namespace["result"]
    results = results["planes"] if "planes" in results else results
    for (optimizer, d_k), r in results.items():
        line = next(line for line in run.output.splitlines()
                    if line.startswith(f"- {OPTIMIZER_LABELS[optimizer]}, d_k = {d_k}: the unscaled"))
        versus = {"the unscaled default": "none", "the best point of the u = 0 column": "column"}
        said = [name for name in versus if name in line]
        assert said == (list(versus) if d_k in plane.grid_d_ks else ["the unscaled default"]), line
        for name in said:
            ratio = paired(r.confirm[versus[name]], r.confirm["inv_sqrt"], log=True)
            words = ("ends higher" if ratio.low > 0 else "ends lower" if ratio.high < 0
                     else "is not told apart")
            assert f"{name} {words} ({ratio.ratio()})" in line, (name, line)


def test_the_learned_scale_is_read_as_its_runs_say(run_snippet):
    run = run_snippet("tuning/learned_scale.py")
    for r in (r for r in run.namespace["result"] if r["learned"]):
        kept = r["scale_ratio"][~r["diverged"]]
        below = int((kept < 1).sum())
        words = (f"below its start in all {len(kept)}" if below == len(kept)
                 else f"above its start in {len(kept) - below} of {len(kept)}")
        assert len(kept) == 0 or f"the learned scale ends {words} runs" in run.output, r
