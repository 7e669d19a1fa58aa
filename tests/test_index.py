"""The home page's claims: its figure and the answer it opens with."""

from __future__ import annotations

import pytest

from sdpa.attention import Scale

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_the_answer_figure(run_snippet, claim):
    result = run_snippet("index/answer.py").namespace["result"]
    assert result["d_k"] == 64
    weights, row_keys = result["weights"], result["row_keys"]
    # "Without the factor two keys hold most of the weight, more than four fifths" (the words
    # were "nearly all ... the rest less than a tenth": a margin of 2.3 over ten independent
    # seed blocks, the top two's weight in the one row shown being 0.92-0.995)
    none = weights[Scale.NONE]
    claim.above("unscaled row: the top two keys' weight, more than four fifths", none[0] + none[1], 0.8)
    # (a bound on a weight, read on the weight's own scale: the log scale's spread comes from
    # rows whose fifth key holds a millionth, far inside the bound)
    claim.below("unscaled row: the largest weight from the fifth key on", max(none[4:]), 0.05)
    # "with 1/sqrt(d_k) it is spread over many keys": more than ten in play (the one row shown:
    # "a quarter of the row" had a margin of 2.8 over ten independent seed blocks, "most of
    # the row" under 3 before that)
    claim.above("scaled row: keys in play, more than ten", row_keys[Scale.INV_SQRT], 10)
    claim.below("scaled row: the largest weight", weights[Scale.INV_SQRT][0], 0.3)
    keys = result["keys_in_play"]
    dims = [8, 16, 32, 64, 128, 256, 512]
    # "unscaled rows lose keys as heads widen"; "one or two keys" from d_k = 64 on
    for d, a, b in zip(dims[1:], keys[Scale.NONE], keys[Scale.NONE][1:]):
        claim.below(f"unscaled: keys in play fall at {d}", b, a)
    for d, k in zip(dims, keys[Scale.NONE]):
        if d >= 64:
            claim.below(f"unscaled: keys in play under two at {d}", k, 2)
    # "scaled rows start alike at every width" (the caption)
    for d, k in zip(dims, keys[Scale.INV_SQRT]):
        claim.between(f"scaled: keys in play about 40 at {d}", k, 35, 45)
    # "rows divided by d_k drift towards uniform"
    for d, a, b in zip(dims[1:], keys[Scale.INV], keys[Scale.INV][1:]):
        claim.above(f"1/d_k: keys in play rise at {d}", b, a)
    claim.above("1/d_k: keys in play at 512, nearly uniform", keys[Scale.INV][-1], 60)


def test_how_wide_rows_start_depends_on_the_initialisation(run_snippet):
    """The table under the figure: PyTorch's default initialisation gives a third of the unit
    model's spread, exactly (components of variance 1/3)."""
    starts = run_snippet("index/answer.py").namespace["result"]["starts"]
    unit, default, _ = starts.values()
    assert default["spread"] == pytest.approx(unit["spread"] / 3)


def test_the_short_answer(run_snippet, claim):
    """includes/verdicts.md, section short: "softmax rows start neither peaked nor flat, however
    wide the head": with 1/sqrt(d_k) the median row of 64 keys has more than two keys in play
    (peaked: under two, the unscaled rows from d_k = 64 on) and fewer than 0.9 x 64 (flat: the
    1/d_k rows' 60 at d_k = 512), at every head dimension of the figure."""
    keys = run_snippet("index/answer.py").namespace["result"]["keys_in_play"][Scale.INV_SQRT]
    for d, k in zip([8, 16, 32, 64, 128, 256, 512], keys):
        claim.above(f"scaled: not peaked at {d}", k, 2, log=True)
        claim.below(f"scaled: not flat at {d}", k, 0.9 * 64, log=True)
