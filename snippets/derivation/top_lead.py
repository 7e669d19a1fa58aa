"""What decides how peaked a row is: the top key's lead over the next keys, not the gap.

The largest weight of a row is 1 / (1 + sum over the other keys j of e^-(z_top - z_j)):
each other key enters through the top key's lead over it, and the worst key, e^-gap, is
the smallest term of that sum. Three rows of three logits show it by hand. The survey's
rows at d_k = 128 (``sdpa.survey``, unscaled, unit-variance q and k and PyTorch's default
initialisation) show it across row lengths: per row the gap (best minus worst logit), the
lead (best minus second best) and the largest weight.
"""

import math

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HAND_ROWS = [[10.0, 10.0, -30.0], [10.0, 0.0, 0.0], [10.0, 7.0, -30.0]]
D_K = 128
ROW_LENGTHS = [8, 64, 512]  # the gap table's row lengths: the same draw


def by_hand(logits):
    z = torch.tensor(logits, dtype=torch.float64)
    top, second = z.topk(2).values.tolist()
    return {"logits": logits, "gap": (z.max() - z.min()).item(), "lead": top - second,
            "max_weight": torch.softmax(z, 0).max().item()}


def lead_and_gap(init, n):
    rows = survey.rows(D_K, survey.factor(Scale.NONE, D_K, init), n)
    top, second = rows.z.topk(2, -1).values.unbind(-1)
    lead = top - second
    return {"init": init, "n": n, "gap": rows.gap.median().item(),
            "lead": lead.median().item(), "max_weight": rows.max_weight.mean().item(),
            "lead_se": survey.standard_error(lead, torch.median),
            "max_weight_se": survey.standard_error(rows.max_weight)}


result = {"hand": [by_hand(z) for z in HAND_ROWS],
          "survey": [lead_and_gap(init, n) for init in ("unit", "default") for n in ROW_LENGTHS]}

print(
    sdpa.markdown_table(
        ["logits", "gap (best − worst)", "lead (best − second)", "largest weight"],
        [(", ".join(f"{x:g}" for x in r["logits"]), r["gap"], r["lead"], f"{r['max_weight']:.5f}")
         for r in result["hand"]],
        caption="Three rows of three keys: the first has the widest gap, yet its two best keys "
        "split the weight evenly.",
    )
)

print(
    sdpa.markdown_table(
        ["init", "keys per row", "median gap", "median lead", "e^lead", "mean largest weight"],
        [(r["init"], r["n"], r["gap"], r["lead"], math.exp(r["lead"]), r["max_weight"])
         for r in result["survey"]],
        caption=f"Unscaled rows at d_k = {D_K}, {survey.N_ROWS:,} queries per row length. "
        "e^lead: how many times more weight the best key gets than the second best.",
    )
)
