"""Head count against head size: one d_model split into more, smaller heads, at initialisation.

With d_model fixed, h heads have d_k = d_model / h each. Every head's rows come from the
site's survey of initial attention (``sdpa.survey``: q and k with independent
unit-variance components, rows of 64 keys), so this is the saturation table read by head
count. Per rule and head count: the standard deviation of the logits the softmax sees,
the median number of keys in play (e^entropy) and the share of one-hot rows.
"""

import sdpa
from sdpa import survey
from sdpa.attention import Scale

D_MODEL = 512  # the base Transformer's (Vaswani et al. 2017), which splits it into 8 heads of 64
HEADS = [1, 2, 4, 8, 16, 32, 64]
N_KEYS = 64


def split(heads, rule):
    d_k = D_MODEL // heads
    rows = survey.rows(d_k, survey.factor(rule, d_k), N_KEYS)
    return {"heads": heads, "d_k": d_k, "rule": rule, "logit_std": rows.z.std().item(),
            "effective_keys": rows.effective_keys.median().item(), "one_hot": rows.one_hot()}


result = [split(h, rule) for h in HEADS for rule in Scale]
at = {(r["heads"], r["rule"]): r for r in result}

print(
    sdpa.markdown_table(
        ["heads", "d_k", *[f"{rule.label}: {what}" for rule in Scale
                           for what in ("logit std", "keys in play")], "none: one-hot rows"],
        [(h, D_MODEL // h,
          *[value for rule in Scale for value in (at[h, rule]["logit_std"],
                                                  at[h, rule]["effective_keys"])],
          f"{at[h, Scale.NONE]['one_hot']:.1%}")
         for h in HEADS],
        caption=f"d_model = {D_MODEL} split into h heads of d_k = {D_MODEL}/h, unit-variance q and "
        f"k, rows of {N_KEYS} keys ({survey.N_ROWS:,} per head size). Keys in play: median of "
        "e^entropy over rows (64 for a uniform row, 1 for a strictly one-hot row). Under "
        "1/√d_k and 1/d_k no row is one-hot.",
    )
)
