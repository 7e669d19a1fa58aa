"""The language-model page: the text it trains on, the spread its heads start with, the
plane's design, and what its verdicts say. Verdicts about the trained models are claims of
the full profile: the quick profile's runs are too small to support them, and the page
says so."""

from __future__ import annotations

import hashlib

import pytest

from sdpa.language import SIZES, language_study, logit_spread, run_language
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
    # "at least 4 x 4 points", spanning every rule's point (rows 0 to 2) and wider starts
    assert len(full.u_steps) >= 4 and len(full.v_steps) >= 4
    assert {0, 1, 2} <= set(full.u_steps) and {0, 1, 2} <= set(full.v_steps)
    # ... up to a 7B model's starting spread (d_model 4096, d_head 128)
    assert min(full.u_steps) <= full.spread_steps(4096, 128)
    assert (len(full.choose_seeds), len(full.confirm_seeds)) == (3, 5)
    # "about two passes over the text"
    passes = full.steps * full.batch * full.model.context / len(text_corpus().train)
    assert 1.7 < passes < 2.3
    quick = SIZES["quick"]
    assert (quick.u_steps, quick.v_steps) == ((0, 1), (0, 1)), "the quick build: a 2 x 2 corner"
    for study in SIZES.values():
        assert not set(study.choose_seeds) & set(study.confirm_seeds), "disjoint seeds"


def test_a_named_spread_is_reached_by_its_row():
    study = SIZES["full"]
    here = logit_spread(study.model.d_model, study.model.d_head)
    for _, d_model, d_head in study.spreads:
        m = study.multiplier(study.spread_steps(d_model, d_head))
        assert here * m**2 == pytest.approx(logit_spread(d_model, d_head))


@pytest.mark.claims
def test_the_initial_spread_matches_its_derivation(run_snippet, claim):
    rows = {r["shape"]: r for r in run_snippet("language-model/initial_spread.py").namespace["result"]}
    # Over seeds 0-19 the measured/predicted ratio spanned 0.91-1.11 (quick), 0.96-1.03
    # (full) and 0.985-1.01 (GPT-Neo's widths): tolerances about twice that.
    for shape, tol in (("quick size", 0.2), ("full size", 0.08), ("GPT-Neo 1.3B widths", 0.03)):
        claim.near(f"{shape}: measured / predicted", rows[shape]["measured"] / rows[shape]["predicted"],
                   1, tol=tol)
    claim.below("full size: an unscaled head starts nearly flat", rows["full size"]["measured"], 0.5)
    claim.above("GPT-Neo's width: a spread of about 9", rows["GPT-Neo 1.3B widths"]["measured"], 8)


@pytest.mark.claims
def test_the_verdict_says_what_the_numbers_show(run_snippet):
    """Each sentence of the verdict follows from the paired interval it quotes."""
    for row in run_snippet("language-model/verdict.py").namespace["result"]["rows"]:
        d = row["difference"]
        assert (row["word"] == "ties") == (d.low <= 0 <= d.high)
        if row["word"] != "ties":
            assert (row["word"] == "ends higher") == (d.mean > 0)


@pytest.mark.claims
def test_at_the_first_step_the_query_gradient_is_proportional_to_the_factor(run_snippet, claim):
    """Near-uniform rows: dL/dz does not depend on the factor s, dL/dq = s sum_j dL/dz_j k_j,
    so |grad W_Q| / |grad W_V| moves by sqrt(d_head) from one rule to the next."""
    result = run_snippet("language-model/training_curves.py").namespace["result"]
    start = {name: sum(c["start_ratio"]) / len(c["start_ratio"]) for name, c in result["rules"].items()}
    root = language_study().model.d_head ** 0.5
    claim.near("none / 1/sqrt(d_head) over sqrt(d_head)", start["none"] / start["inv_sqrt"] / root,
               1, tol=0.1)
    claim.near("1/sqrt(d_head) / 1/d_head over sqrt(d_head)", start["inv_sqrt"] / start["inv"] / root,
               1, tol=0.1)


@pytest.mark.claims
@pytest.mark.profiles("full")
def test_the_rate_and_the_best_point_lie_inside_what_was_measured(run_snippet):
    """The full build's windows are wide enough: the shared rate stage 1 chose is neither the
    lowest nor the highest it tried, and the plane's best point lies strictly inside its grid."""
    out = run_language()
    study = out.study
    assert study.lrs[0] < out.lr < study.lrs[-1], out.lr
    i, j = out.best
    assert min(study.u_steps) < i < max(study.u_steps) and min(study.v_steps) < j < max(study.v_steps), out.best
