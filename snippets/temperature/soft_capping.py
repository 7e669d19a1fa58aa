"""Soft-capping: c tanh(z / c) on the attention logits (Gemma 2: c = 50; Grok-1: c = 30).

Left, the capped logit against the raw one; right, its slope sech^2(z / c), the factor by
which the cap multiplies every gradient that reaches a raw logit. The table feeds rows of
64 raw logits of growing spread through softmax, uncapped and capped, and measures the
largest weight and the size of the Jacobian of the weights with respect to the raw logits.
"""

import torch

import sdpa
from sdpa.temperature import softcap

CAPS = [50.0, 30.0]
SPREADS = [1.0, 5.0, 20.0, 50.0, 100.0]
N_ROWS, N_KEYS = 128, 64


def jacobian_norm(p, slope):
    """Frobenius norm of d softmax / d raw logits, (diag(p) - p p^T) diag(slope), per row."""
    jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
    return (jac * slope.unsqueeze(-2)).norm(dim=(-2, -1))


def measure_capping(seed=14):
    generator = sdpa.seed(seed)
    base = torch.randn(N_ROWS, N_KEYS, generator=generator, dtype=torch.float64).to(sdpa.device())
    rows = []
    for spread in SPREADS:
        z = base * spread
        row = {"spread": spread}
        p = torch.softmax(z, -1)
        row["max_weight, none"] = p.max(-1).values.mean().item()
        row["jacobian, none"] = jacobian_norm(p, torch.ones_like(z)).mean().item()
        for cap in CAPS:
            capped = softcap(z, cap)
            p = torch.softmax(capped, -1)
            slope = 1 - torch.tanh(z / cap) ** 2
            row[f"max_weight, {cap:g}"] = p.max(-1).values.mean().item()
            row[f"jacobian, {cap:g}"] = jacobian_norm(p, slope).mean().item()
            row[f"max_abs_logit, {cap:g}"] = capped.abs().max().item()
            row[f"top_slope, {cap:g}"] = slope.gather(-1, z.argmax(-1, keepdim=True)).mean().item()
        rows.append(row)
    return rows


result = measure_capping()

figure = sdpa.Figure(
    "temperature-soft-capping",
    caption="Left: the capped logit c·tanh(z/c) against the raw logit z, for Gemma 2's cap (50) and "
    "Grok-1's (30). Right: its slope, sech²(z/c), which multiplies the gradient reaching z. Below "
    "about c/3 the cap is nearly the identity; beyond c it flattens and the slope falls to zero.",
    alt="Left: two S-shaped curves that follow the diagonal near zero and level off at plus and minus "
    "50 and 30. Right: two bell-shaped slope curves equal to 1 at zero and falling towards 0 beyond "
    "the cap.",
    ncols=2,
    size=(7.6, 3.0),
)
raw = torch.linspace(-150, 150, 601, dtype=torch.float64)
with figure as (left, right):
    left.plot(raw, raw, ":", color=sdpa.INK, lw=0.9, label="no cap")
    for color, cap in zip(sdpa.PALETTE, CAPS):
        left.plot(raw, softcap(raw, cap), color=color, label=f"c = {cap:g}")
        right.plot(raw, 1 - torch.tanh(raw / cap) ** 2, color=color, label=f"c = {cap:g}")
    left.set(xlabel="raw logit z", ylabel="capped logit", ylim=(-80, 80))
    right.set(xlabel="raw logit z", ylabel="slope sech²(z/c)")
    left.legend()
    right.legend()
print(figure.html)

print(
    sdpa.markdown_table(
        ["raw logit std", "largest weight, no cap", *(f"largest weight, c = {c:g}" for c in CAPS),
         "‖∂p/∂z‖, no cap", *(f"‖∂p/∂z‖, c = {c:g}" for c in CAPS)],
        [(r["spread"], r["max_weight, none"], *(r[f"max_weight, {c:g}"] for c in CAPS),
          r["jacobian, none"], *(r[f"jacobian, {c:g}"] for c in CAPS)) for r in result],
        caption=f"{N_ROWS} rows of {N_KEYS} raw logits with the given standard deviation. "
        "‖∂p/∂z‖ is the mean Frobenius norm of the Jacobian of the attention weights with respect to "
        "the raw (pre-cap) logits: the factor through which any gradient reaches W_Q and W_K.",
    )
)
