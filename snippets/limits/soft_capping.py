"""Soft-capping: κ tanh(z / κ) on the attention logits (Gemma 2: κ = 50; Grok-1: κ = 30).

First figure: the capped logit against the raw one, and its slope sech^2(z / kappa), the factor
by which the cap multiplies every gradient that reaches a raw logit. Then rows of 64 raw
Gaussian logits of growing spread go through softmax, uncapped and capped, and for every
row we take the largest weight and the Frobenius norm of the Jacobian of the weights with
respect to the raw logits, (diag(p) - p p^T) diag(slope). The second figure and the table
compare the mean of that norm over rows with its median and with the share of rows in which
the cap makes it larger (± one binomial standard error).
"""

import math

import torch

import sdpa
from sdpa.attention import jacobian, softcap, softcap_slope

generator = sdpa.seed(14)
CAPS = [50.0, 30.0]
SPREADS = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
TABLE_SPREADS = [1.0, 5.0, 20.0, 50.0, 100.0]
N_ROWS, N_KEYS = 1024, 64


def row_norms(z, cap):
    """Per row: the largest weight and ||d softmax(cap(z)) / d z||_F (no cap: cap=None)."""
    if cap is None:
        capped, slope = z, torch.ones_like(z)
    else:
        capped, slope = softcap(z, cap), softcap_slope(z, cap)
    p = torch.softmax(capped, -1)
    return capped, p.max(-1).values, (jacobian(p) * slope.unsqueeze(-2)).norm(dim=(-2, -1))


def measure_capping(generator):
    base = torch.randn(N_ROWS, N_KEYS, generator=generator, dtype=torch.float64)
    base = base.to(sdpa.device())
    rows = []
    for spread in SPREADS:
        _, top, uncapped = row_norms(base * spread, None)
        for cap in (None, *CAPS):
            capped, top, norm = row_norms(base * spread, cap)
            larger = (norm > uncapped).double().mean().item()
            se = math.sqrt(larger * (1 - larger) / N_ROWS)
            rows.append({"spread": spread, "cap": cap, "max_weight": top.mean().item(),
                         "max_abs_logit": capped.abs().max().item(),
                         "jacobian_mean": norm.mean().item(),
                         "jacobian_median": norm.median().item(),
                         "capped_larger": None if cap is None else larger,
                         "capped_larger_se": None if cap is None else se})
    return rows


result = measure_capping(generator)


def pick(spread, cap):
    return next(r for r in result if r["spread"] == spread and r["cap"] == cap)


figure = sdpa.Figure(
    "soft-capping",
    caption="Left: the capped logit κ·tanh(z/κ) against the raw logit z, for Gemma 2's cap (50) "
    "and Grok-1's (30). Right: its slope, sech²(z/κ), which multiplies the gradient reaching z. "
    "Below about κ/3 the cap is nearly the identity; beyond κ it flattens and the slope falls to "
    "zero.",
    alt="Left: two S-shaped curves that follow the diagonal near zero and level off at plus and "
    "minus 50 and 30. Right: two bell-shaped slope curves equal to 1 at zero and falling towards "
    "0 beyond the cap.",
    ncols=2,
    size=(7.6, 3.0),
)
raw = torch.linspace(-150, 150, 601, dtype=torch.float64)
with figure as (left, right):
    left.plot(raw, raw, ":", color=sdpa.INK, lw=0.9, label="no cap")
    for color, cap in zip(sdpa.PALETTE, CAPS):
        left.plot(raw, softcap(raw, cap), color=color, label=f"κ = {cap:g}")
        right.plot(raw, softcap_slope(raw, cap), color=color, label=f"κ = {cap:g}")
    left.set(xlabel="raw logit z", ylabel="capped logit", ylim=(-80, 80))
    right.set(xlabel="raw logit z", ylabel="slope sech²(z/κ)")
    left.legend()
    right.legend()
print(figure.html)

figure = sdpa.Figure(
    "soft-capping-rows",
    caption=f"Rows of {N_KEYS} raw Gaussian logits against their standard deviation. Left: "
    "the size of the Jacobian with respect to the raw logits, averaged over rows (solid) "
    "and for the median row (dashed), without a cap (grey) and with caps 50 and 30. Right: "
    "the share of rows in which the cap makes it larger. The mean says the cap shrinks the "
    "gradient; from a spread of 20, the median row and the share say it usually grows it: "
    "without a cap the mean "
    "is carried by the few rows whose top keys nearly tie.",
    alt="Left: log-scale curves against the logit spread. The uncapped mean stays above the capped "
    "means, but at the wider spreads the uncapped median falls far below the capped medians."
    " Right: the share of rows with a larger capped Jacobian rises from zero to above one half.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    for color, cap in zip([sdpa.INK, *sdpa.PALETTE], (None, *CAPS)):
        label = "no cap" if cap is None else f"κ = {cap:g}"
        mine = [pick(s, cap) for s in SPREADS]
        left.plot(SPREADS, [r["jacobian_mean"] for r in mine], "-", color=color,
                  label=f"{label}, mean")
        left.plot(SPREADS, [r["jacobian_median"] for r in mine], "--", color=color,
                  label=f"{label}, median")
        if cap is not None:
            right.plot(SPREADS, [100 * r["capped_larger"] for r in mine], "o-", color=color,
                       label=label)
    right.axhline(50, color=sdpa.INK, ls=":", lw=0.8)
    left.set(xscale="log", yscale="log", xlabel="raw logit std",
             ylabel="‖∂p/∂z‖_F (Frobenius)")
    right.set(xscale="log", xlabel="raw logit std", ylim=(0, 100),
              ylabel="rows where the cap makes it larger (%)")
    left.legend(fontsize=7)
    right.legend()
print(figure.html)


def cell(spread, cap):
    r = pick(spread, cap)
    return f"{r['capped_larger']:.0%} ± {r['capped_larger_se']:.0%}"


print(
    sdpa.markdown_table(
        ["raw logit std", "largest weight: no cap, κ = 50, κ = 30",
         *(f"{stat} ‖J_κ‖_F, {name}" for stat in ("mean", "median")
           for name in ("no cap", *(f"κ = {c:g}" for c in CAPS))),
         *(f"rows larger, κ = {c:g}" for c in CAPS)],
        [(s, ", ".join(sdpa.fmt(pick(s, c)["max_weight"]) for c in (None, *CAPS)),
          *(pick(s, c)["jacobian_mean"] for c in (None, *CAPS)),
          *(pick(s, c)["jacobian_median"] for c in (None, *CAPS)),
          *(cell(s, c) for c in CAPS)) for s in TABLE_SPREADS],
        caption=f"{N_ROWS:,} rows of {N_KEYS} raw logits with the given standard deviation. "
        "‖J_κ‖_F = ‖∂p/∂z‖_F is the Frobenius norm of the Jacobian of the attention weights with "
        "respect to the raw logits, before the cap. It is not the spectral norm ‖J‖₂ of the "
        "other pages. Every gradient that reaches W_Q and W_K passes through it. The last "
        "columns give the share of rows in which the cap makes it larger.",
    )
)
