"""The numbers to quote in an interview, measured rather than remembered.

Every number comes from the measurements the other pages show (``sdpa.survey``, drawn once
per build): the spread of q·k from the derivation's 10^6 scores, and from the survey's rows
of 64 keys the best-minus-worst gap, the top key's lead over the runner-up as the weight
ratio e^lead (what decides how peaked a row is, as the derivation's gap verdict says), the
share of one-hot rows and the keys in play (e^entropy), for unit-variance q and k and for
PyTorch's default ``nn.Linear`` initialisation (components of variance 1/3), unscaled and
scaled.
"""

import math

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [8, 64, 128]
N_KEYS = 64


def survey_rows(d_k, rule, init="unit"):
    return survey.rows(d_k, survey.factor(rule, d_k, init), N_KEYS)


def numbers(d_k):
    unit, scaled = survey_rows(d_k, Scale.NONE), survey_rows(d_k, Scale.INV_SQRT)
    default = survey_rows(d_k, Scale.NONE, "default")
    top, second = unit.z.topk(2, -1).values.unbind(-1)
    lead = (top - second).median().item()
    return {"d_k": d_k, "std": survey.spread(d_k), "sqrt_d_k": math.sqrt(d_k),
            "median_gap": unit.gap.median().item(), "median_lead": lead,
            "weight_ratio": math.exp(lead), "median_gap_default": default.gap.median().item(),
            "one_hot": unit.one_hot(), "one_hot_default": default.one_hot(),
            "keys_unit": unit.effective_keys.median().item(),
            "keys_default": default.effective_keys.median().item(),
            "keys_scaled": scaled.effective_keys.median().item()}


result = [numbers(d_k) for d_k in HEAD_DIMS]

print(
    sdpa.markdown_table(
        ["d_k", "std of q·k (√d_k)", "median gap: unit, default", "e^lead, unit",
         "one-hot rows: unit, default", "keys in play: unit, default, scaled"],
        [(r["d_k"], f"{sdpa.fmt(r['std'])} ({sdpa.fmt(r['sqrt_d_k'])})",
          f"{sdpa.fmt(r['median_gap'])}, {sdpa.fmt(r['median_gap_default'])}", r["weight_ratio"],
          f"{r['one_hot']:.1%}, {r['one_hot_default']:.1%}",
          ", ".join(sdpa.fmt(r[k]) for k in ("keys_unit", "keys_default", "keys_scaled")))
         for r in result],
        caption=f"Rows of {N_KEYS} keys, unscaled unless marked scaled. Unit: unit-variance q "
        "and k; default: PyTorch's nn.Linear initialisation (components of variance 1/3). Gap: "
        "the largest minus the smallest logit of a row. e^lead: how many times more weight the "
        "best key gets than the runner-up, in the median row. One-hot: a largest weight above "
        f"{survey.ONE_HOT}. Keys in play: the median e^entropy (64 for a uniform row).",
    )
)
