"""Do some heads dominate because of their width? Each head's share of the layer's output.

A multi-head layer adds its heads' outputs through W_O: y = sum_h W_O^h o_h, with no
normalisation between heads. With values of independent unit-variance components, head h's
output o_h = sum_j p_j v_j has per-component variance sum_j p_j^2 (1 for a strictly one-hot row,
1/n for a uniform one), so a sharp head puts more variance into y than a soft one. We
measure it after W_O, drawn as PyTorch's nn.Linear draws it, in two layers built from the
survey's rows of 64 keys (``sdpa.survey``, unit-variance q and k):

* five heads of widths 8 to 128 side by side (a design that mixes widths): each head's
  share of the variance of y, without and with the factor;
* eight heads of one width, 64 (the usual layer): how much of one token's update its
  largest head carries, on average over tokens (1/8 if every head carried the same).
"""

import math

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale

generator = sdpa.seed(12)
MIXED_DIMS = [8, 16, 32, 64, 128]
EQUAL_DIM, EQUAL_HEADS = 64, 8
N_KEYS, D_V, D_MODEL = 64, 16, 64


def w_o(heads):
    """W_O of a layer with ``heads`` heads of value width D_V, as nn.Linear initialises it."""
    fan_in = heads * D_V
    w = (torch.rand(D_MODEL, fan_in, generator=generator, dtype=torch.float64) * 2 - 1)
    return (w / math.sqrt(fan_in)).split(D_V, dim=1)  # one (D_MODEL, D_V) block per head


def head_outputs(rows_p):
    """Each head's o = p v, shape (rows, D_V): one value of unit-variance components per key,
    shared by the queries that read the same keys (the survey's key sets)."""
    v = torch.randn(survey.KEY_SETS, N_KEYS, D_V, generator=generator, dtype=torch.float64)
    p = rows_p.reshape(survey.KEY_SETS, -1, N_KEYS)  # (key sets, queries, keys)
    return torch.einsum("sqk,skc->sqc", p, v).reshape(-1, D_V)


def mixed_layer(rule):
    blocks = w_o(len(MIXED_DIMS))
    parts = [head_outputs(survey.rows(d, survey.factor(rule, d), N_KEYS).p) @ block.T
             for d, block in zip(MIXED_DIMS, blocks)]
    total = torch.stack(parts).sum(0).var().item()
    variances = [part.var().item() for part in parts]
    return {"rule": rule, "total": total, "sum_of_parts": sum(variances),
            "share": [v / sum(variances) for v in variances], "variance": variances}


def equal_layer(rule):
    """Eight independent heads of one width for the same tokens: the survey's
    ``survey.N_ROWS`` rows split into eight heads of ``survey.N_ROWS // EQUAL_HEADS`` tokens
    (every head its own key sets). A token's expected share of head h is its sum_j p_j^2 over
    the heads' sum (W_O's blocks are alike in expectation)."""
    p = survey.rows(EQUAL_DIM, survey.factor(rule, EQUAL_DIM), N_KEYS).p
    per_head = (p**2).sum(-1).reshape(EQUAL_HEADS, -1)  # (heads, tokens)
    shares = per_head / per_head.sum(0)
    return {"rule": rule, "largest_share": shares.max(0).values.mean().item()}


mixed = {rule: mixed_layer(rule) for rule in (Scale.NONE, Scale.INV_SQRT)}
equal = {rule: equal_layer(rule) for rule in (Scale.NONE, Scale.INV_SQRT)}
none, scaled = mixed[Scale.NONE], mixed[Scale.INV_SQRT]
result = {
    "mixed": mixed, "equal": equal, "dims": MIXED_DIMS,
    # a sharp head against a soft one of the same width (d_k = 128) after W_O
    "sharp_over_soft": none["variance"][-1] / scaled["variance"][-1],
    "widest_over_narrowest": {rule: m["share"][-1] / m["share"][0] for rule, m in mixed.items()},
}

print(
    sdpa.markdown_table(
        ["head d_k", "share of y's variance, q·k", "share, q·k/√d_k",
         "head's variance after W_O, q·k", "q·k/√d_k"],
        [(d, f"{none['share'][i]:.1%}", f"{scaled['share'][i]:.1%}", none["variance"][i],
          scaled["variance"][i]) for i, d in enumerate(MIXED_DIMS)],
        caption=f"One layer of {len(MIXED_DIMS)} heads of different widths, value width {D_V}, "
        f"W_O as nn.Linear draws it (output width {D_MODEL}); rows of {N_KEYS} keys, unit-variance "
        f"q, k and values. The heads' variances add up to y's: {none['sum_of_parts']:.4f} against "
        f"{none['total']:.4f} unscaled, {scaled['sum_of_parts']:.4f} against "
        f"{scaled['total']:.4f} scaled.",
    )
)
print(
    f"\nAt d_k = {MIXED_DIMS[-1]} the unscaled (sharp) head puts "
    f"{result['sharp_over_soft']:.0f} times the scaled (soft) head's variance into y. "
    f"Unscaled, the widest head's share is {result['widest_over_narrowest'][Scale.NONE]:.1f} "
    f"times the narrowest's; scaled, {result['widest_over_narrowest'][Scale.INV_SQRT]:.2f} "
    f"times. In a layer of {EQUAL_HEADS} heads of d_k = {EQUAL_DIM}, a token's largest head "
    f"carries on average {equal[Scale.NONE]['largest_share']:.0%} of its update unscaled and "
    f"{equal[Scale.INV_SQRT]['largest_share']:.0%} scaled; equal heads would give "
    f"{1 / EQUAL_HEADS:.1%}.\n"
)
