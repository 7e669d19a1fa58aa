"""When the textbook assumptions fail: non-zero means and correlated components.

Four ways to draw queries and keys, each with the variance the algebra predicts, checked
against samples at two head dimensions. ``row spread`` is the standard deviation of the
scores across the keys of one row, averaged over rows: the only spread softmax sees,
since it ignores anything added to a whole row.
"""

import math

import torch

import sdpa

generator = sdpa.seed(4)
HEAD_DIMS = [64, 256]
N_TOKENS = 512
#: The within-vector case's spread comes from one shared factor per token, so its estimate
#: rests on the tokens, not the pairs: 4 times as many tokens halve its error (to about 2%).
N_TOKENS_WITHIN = 2048
MEAN, OMEGA, RHO_PAIR = 0.5, 0.1, 0.3


def draw(case, n, d, generator):
    """Queries and keys (n x d) for one case of the table."""
    q, k = torch.randn(n, d, generator=generator), torch.randn(n, d, generator=generator)
    if case == "mean":
        q, k = q + MEAN, k + MEAN
    elif case == "within":  # equicorrelated components: a shared factor in every coordinate
        shared_q, shared_k = (torch.randn(n, 1, generator=generator) for _ in range(2))
        q = math.sqrt(1 - OMEGA) * q + math.sqrt(OMEGA) * shared_q
        k = math.sqrt(1 - OMEGA) * k + math.sqrt(OMEGA) * shared_k
    elif case == "paired":  # key j leans towards query j: a head that has found its key
        k = RHO_PAIR * q + math.sqrt(1 - RHO_PAIR**2) * k
    return q, k


def predicted(case, d):
    """(mean, variance) of q·k over all pairs, from the algebra on the page."""
    if case == "mean":
        return d * MEAN**2, d * (1 + 2 * MEAN**2)
    if case == "within":
        return 0.0, d * (1 - OMEGA**2) + OMEGA**2 * d**2
    return 0.0, float(d)


CASES = {
    "iid": "independent, mean 0, variance 1",
    "mean": f"component mean {MEAN}",
    "within": f"components correlated within a vector, ω = {OMEGA}",
    "paired": f"key i correlated with query i, ρ = {RHO_PAIR}",
}


def measure_cases(generator, head_dims=HEAD_DIMS, n=N_TOKENS):
    rows = []
    for case in CASES:
        for d in head_dims:
            q, k = draw(case, N_TOKENS_WITHIN if case == "within" else n, d, generator)
            z = q @ k.T
            mean, var = predicted(case, d)
            rows.append(
                {
                    "case": case,
                    "d_k": d,
                    "mean": z.mean().item(),
                    "std": z.std().item(),
                    "predicted_mean": mean,
                    "predicted_std": math.sqrt(var),
                    "row_spread": z.std(dim=1).mean().item(),
                    "matched_mean": z.diagonal().mean().item(),
                }
            )
    return rows


result = measure_cases(generator)

print(
    sdpa.markdown_table(
        ["case", "d_k", "mean of q·k", "predicted", "std of q·k", "predicted", "row spread",
         "matched pair q_i·k_i"],
        [
            (CASES[r["case"]], r["d_k"], r["mean"], r["predicted_mean"], r["std"],
             r["predicted_std"], r["row_spread"], r["matched_mean"])
            for r in result
        ],
        align="lrrrrrrr",
        caption=f"{N_TOKENS} queries × {N_TOKENS} keys per row of the table ({N_TOKENS_WITHIN} × "
        f"{N_TOKENS_WITHIN} for the correlated components, whose spread rests on the tokens' "
        "shared factors). The predicted columns "
        "come from the formulas above; √d_k is 8 at d_k = 64 and 16 at d_k = 256.",
    )
)
