"""The home page's claims: its figure and the answer it opens with."""

from __future__ import annotations

import pytest

from sdpa.attention import Scale

#: Every test here checks what the page says about a measured quantity.
pytestmark = pytest.mark.claims


def test_the_answer_figure(run_snippet):
    result = run_snippet("index/answer.py").namespace["result"]
    assert result["d_k"] == 64
    weights, row_keys = result["weights"], result["row_keys"]
    # "Without the factor two keys share nearly all the weight and the rest get almost none"
    none = weights[Scale.NONE]
    assert none[0] + none[1] > 0.9 and max(none[4:]) < 1e-2
    # "with 1/sqrt(d_k) the weight is spread over most of the row" (more than half in play)
    assert row_keys[Scale.INV_SQRT] > 32 and weights[Scale.INV_SQRT][0] < 0.3
    keys = result["keys_in_play"]
    # "unscaled rows lose keys as heads widen"; "one or two keys" from d_k = 64 on
    assert keys[Scale.NONE] == sorted(keys[Scale.NONE], reverse=True)
    assert all(k < 2 for d, k in zip([8, 16, 32, 64, 128, 256, 512], keys[Scale.NONE]) if d >= 64)
    # "scaled rows start alike at every width": the answer's "about 40 of them in play"
    assert all(35 < k < 45 for k in keys[Scale.INV_SQRT])
    # "rows divided by d_k drift towards uniform"
    assert keys[Scale.INV] == sorted(keys[Scale.INV]) and keys[Scale.INV][-1] > 60


def test_how_wide_rows_start_depends_on_the_initialisation(run_snippet, claim):
    """The answer: "PyTorch's default makes it a third as wide, GPT-2's small one nearly
    uniform at small widths" (rows of 64 keys at d_k = 64, no factor)."""
    starts = run_snippet("index/answer.py").namespace["result"]["starts"]
    unit, default, gpt2 = starts.values()
    assert default["spread"] == pytest.approx(unit["spread"] / 3)
    claim.below("unit variance: keys in play", unit["keys"], 2)
    claim.above("GPT-2 at d_model 128: keys in play, of 64", gpt2["keys"], 0.9 * 64)
    claim.above("PyTorch's default: more keys in play than unit variance's", default["keys"] / unit["keys"], 2,
                log=True)
