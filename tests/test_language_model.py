"""The language-model page: the text it trains on, the spread its heads start with, the
study's design, and what its verdict says. Verdicts about the trained models are claims of
the full profile: the quick profile's runs are too small to support them, and the page
says so."""

from __future__ import annotations

import hashlib
import math

import pytest

from sdpa.language import (NAMED_MODELS, SIZES, corrected_confidence, language_study,
                           logit_spread, run_language, spread_pairs)
from sdpa.tasks import text_corpus


def test_the_text_is_cpythons_help_topics_and_its_hash_is_printed(run_snippet):
    from pydoc_data.topics import topics

    text = "".join(topics[name] for name in sorted(topics))
    corpus = text_corpus()
    assert corpus.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert len(corpus.train) + len(corpus.valid) == len(text) and corpus.vocab == len(set(text))
    assert 400_000 < len(text) < 550_000, "about 465,000 characters"
    run = run_snippet("language-model/setup.py")
    assert corpus.sha256[:16] in run.output
    assert run.namespace["result"]["profile"] in ("quick", "full")


def test_sizes_declare_both_profiles_and_the_full_plane():
    assert set(SIZES) == {"quick", "full"}
    full = SIZES["full"]
    assert full.model.d_head == 64 and full.model.n_layers >= 2 and full.model.n_heads >= 2
    # five rows: 1/d_k's start (2) to beyond a 7B model's spread (-2), each row's window
    # around its diagonal point, free to widen five steps either way (the widest row's
    # best lay three steps out in a full build)
    assert full.u_steps == (-2, -1, 0, 1, 2)
    assert min(full.u_steps) <= full.spread_steps(4096, 128)
    assert full.w_offsets == (-1, 0, 1) and full.w_reach >= 5
    assert (len(full.choose_seeds), len(full.confirm_seeds)) == (3, 8)
    # "about two passes over the text"
    passes = full.steps * full.batch * full.model.context / len(text_corpus().train)
    assert 1.7 < passes < 2.3
    quick = SIZES["quick"]
    assert quick.u_steps == (0, 1) and len(quick.w_offsets) == 2, "the quick build: two rows"
    for study in SIZES.values():
        assert not set(study.choose_seeds) & set(study.confirm_seeds), "disjoint seeds"
        assert study.spreads == (), "no named spread is trained: the verdict is the rows'"


def test_the_spreads_the_page_names():
    """Rows -1 and -2 start at about 3.3 and 26; GPT-2 small's width gives about 2.5 and a
    7B model's about 18.5 (the issue's arithmetic, done here)."""
    study = SIZES["full"]
    here = logit_spread(study.model.d_model, study.model.d_head)
    assert here == pytest.approx(math.sqrt(64) * 128 * 0.02**2) == pytest.approx(0.4096)
    assert study.spread(0) == pytest.approx(here) and study.spread(1) == pytest.approx(0.0512)
    assert study.spread(-1) == pytest.approx(3.2768) and study.spread(-2) == pytest.approx(26.2144)
    named = {name: logit_spread(d_model, d_head) for name, d_model, d_head in NAMED_MODELS}
    assert named["GPT-2 small"] == pytest.approx(2.4576)
    assert named["a 7B model"] == pytest.approx(18.5364, abs=1e-3)
    for _, d_model, d_head in NAMED_MODELS:  # a named spread's row, were it trained
        assert study.spread(study.spread_steps(d_model, d_head)) == pytest.approx(
            logit_spread(d_model, d_head))


def test_a_window_widens_only_while_its_best_is_on_an_edge():
    from sdpa.language import widened

    losses = {0: 3.0, 1: 2.0, 2: 1.0}
    assert widened(losses, 1, (-3, 3)) == 3
    assert widened(losses, 1, (-3, 2)) is None, "not past the reach"
    assert widened({0: 1.0, 1: 2.0, 2: 3.0}, 1, (-3, 3)) == -1
    assert widened({0: 2.0, 1: 1.0, 2: 3.0}, 1, (-3, 3)) is None


@pytest.mark.claims
def test_the_initial_spread_matches_its_derivation(run_snippet, claim):
    rows = {r["shape"]: r for r in run_snippet("language-model/initial_spread.py").namespace["result"]}
    # The derivation is exact in expectation over the weights. Tolerances: 5 standard errors
    # of the mean over the draws, from the per-draw SD of measured/predicted at offset 0
    # before any sweep (0.082 quick, 0.028 full, over 8 draws each: 0.15 and 0.05); GPT-Neo's
    # widths, one draw, 0.03 (its draws spread by under 0.01).
    for shape, tol in (("quick size", 0.15), ("full size", 0.05), ("GPT-Neo 1.3B widths", 0.03)):
        claim.near(f"{shape}: measured / predicted", rows[shape]["measured"] / rows[shape]["predicted"],
                   1, tol=tol)
    claim.below("full size: an unscaled head starts nearly flat", rows["full size"]["measured"], 0.5)
    claim.above("GPT-Neo's width: a spread of about 9", rows["GPT-Neo 1.3B widths"]["measured"], 8)


@pytest.mark.claims
def test_the_verdict_says_what_the_numbers_show(run_snippet):
    """Each word of the verdict follows from the paired interval it quotes, at the level
    corrected for the spreads compared; it turns only between intervals of opposite sign that
    both exclude zero, and never says "ties"."""
    result = run_snippet("language-model/verdict.py").namespace["result"]
    study = language_study()
    assert result["level"] == pytest.approx(1 - 0.05 / (len(study.u_steps) - 1))
    rows = result["rows"]
    assert len(rows) == len(study.u_steps) - 1
    for row in rows:
        d = row["difference"]
        assert d.confidence == pytest.approx(result["level"]) and d.n == len(study.confirm_seeds)
        assert (row["word"] == "is not told apart") == (d.low <= 0 <= d.high)
        if row["word"] != "is not told apart":
            assert (row["word"] == "ends higher") == (d.mean > 0)
    out = run_language()  # the rows whose best w is an end of its window are flagged
    for row in rows:
        assert row["edge"] == [u for u in (row["u"], row["u"] + 1)
                               if out.row_best[u][1] in (out.windows[u][0], out.windows[u][-1])]
    decided = [row for row in sorted(rows, key=lambda row: row["spread"]) if row["difference"].excludes_zero]
    assert result["turns"] == [(a["spread"], b["spread"], a["word"], b["word"]) for a, b in zip(decided, decided[1:])
                               if (a["difference"].mean > 0) != (b["difference"].mean > 0)]
    assert "ties" not in run_snippet("language-model/verdict.py").output


@pytest.mark.claims
@pytest.mark.profiles("quick")
def test_at_the_first_step_the_query_gradient_is_proportional_to_the_factor(run_snippet, claim):
    """Near-uniform rows: dL/dz does not depend on the factor s, dL/dq = s sum_j dL/dz_j k_j,
    so |grad W_Q| / |grad W_V| moves by sqrt(d_head) from one rule to the next. The page
    prints what it moves by (kind (b)); this derived prediction keeps the quick build's line
    near 1 at every seed offset. The full study is not swept at three offsets, so there it
    is no claim (issue 36, item 2)."""
    result = run_snippet("language-model/training_curves.py").namespace["result"]
    start = {name: sum(c["start_ratio"]) / len(c["start_ratio"]) for name, c in result["rules"].items()}
    root = language_study().model.d_head ** 0.5
    claim.near("none / 1/sqrt(d_head) over sqrt(d_head)", start["none"] / start["inv_sqrt"] / root,
               1, tol=0.1)
    claim.near("1/sqrt(d_head) / 1/d_head over sqrt(d_head)", start["inv_sqrt"] / start["inv"] / root,
               1, tol=0.1)


@pytest.mark.profiles("full")
def test_the_full_study_compares_four_spreads_at_a_corrected_level():
    """The full build's verdict compares rows -2 to 1 with the row above, at a Bonferroni
    level for four comparisons."""
    out = run_language()
    assert corrected_confidence(out.study) == pytest.approx(1 - 0.05 / 4)
    assert [p.u for p in spread_pairs(out)] == [-2, -1, 0, 1]


def test_the_edge_line_names_every_best_on_an_edge(run_snippet):
    """The line under the plane names the shared rate if it is an end of stage 1's window,
    and every row whose best w is an end of its window (the quick build's narrow windows
    often leave one there): what the windows did not find is printed, not claimed away."""
    run = run_snippet("language-model/plane.py")
    r = run.namespace["result"]
    line = next(x for x in run.output.splitlines() if x.startswith("**Edges.**"))
    assert ("The shared rate" in line) == (r["lr"] in (min(r["lrs"]), max(r["lrs"])))
    for u, (_, w) in r["row_best"].items():
        window = r["windows"][u]
        assert (f"row {u}'s best, w = {w}," in line.lower()) == (w in (window[0], window[-1])), (u, w, window, line)
    assert ("Every best lies inside" in line) == (not run.namespace["edges"](r))


@pytest.mark.profiles("full")
def test_every_best_of_the_full_study_lies_inside_its_window(run_snippet):
    """The full study's windows widen until each best lies inside: the shared rate inside
    stage 1's window, each row's best w inside its row's window. A best at a reach fails
    here (widen ``rate_reach`` or ``w_reach``), so that every row of the verdict compares
    settings tuned inside what was measured. A design check at the seeds the build runs
    (offset 0), not a swept claim: at reach u ± 3, row -2's best lay on the reach; at
    u ± 5 every best lies inside."""
    run = run_snippet("language-model/plane.py")
    r = run.namespace["result"]
    assert not run.namespace["edges"](r), run.output


def test_the_first_step_line_says_what_the_seeds_show(run_snippet):
    run = run_snippet("language-model/training_curves.py")
    falls = run.namespace["first_step"](run.namespace["result"], language_study().model.d_head)
    for pair, words in ((("none", "inv_sqrt"), "from no factor to 1/√d_k"),
                        (("inv_sqrt", "inv"), "from 1/√d_k to 1/d_k")):
        assert f"by √d_k {falls[pair].ratio()} {words}" in run.output
