"""Rotary embeddings leave the logits' spread unchanged at initialisation.

RoPE turns each pair of q's and k's components by an angle proportional to the token's
position, so the logit of a query at position i + offset and a key at position i is
q·R(offset)k: a rotation, which keeps every norm. With independent, isotropic q and k,
R(offset)k has the same distribution as k, so Var(q·k) stays d_k. We measure both, and,
as the control where RoPE does act, a query equal to its key: q·R(offset)q shrinks on
average as the offset grows (RoFormer's long-term decay).
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk
from sdpa.variants import rotary

generator = sdpa.seed(41)
DIMS = [64, 128]
OFFSETS = [0, 1, 16, 256, 4096]
N_PAIRS = 10_000


def rotary_spread(generator):
    out = []
    for d_k in DIMS:
        q, k = random_qk(N_PAIRS, N_PAIRS, d_k, generator, device=sdpa.device())
        start = torch.randint(0, 4096, (N_PAIRS,), generator=generator).to(q.device)
        plain = (q * k).sum(-1)
        for offset in OFFSETS:
            q_rot, k_rot = rotary(q, start + offset), rotary(k, start)
            logit = (q_rot * k_rot).sum(-1)
            same = (rotary(k, start + offset) * k_rot).sum(-1)  # the query equal to the key
            freqs = 10_000.0 ** (-torch.arange(0, d_k // 2, dtype=torch.float64) * 2 / d_k)
            out.append({"d_k": d_k, "offset": offset, "std_plain": plain.std().item(),
                        "std_rotary": logit.std().item(),
                        "norm_change": ((q_rot.norm(dim=-1) - q.norm(dim=-1)).abs()
                                        / q.norm(dim=-1)).max().item(),
                        "same_mean": same.mean().item() / d_k,
                        "same_predicted": torch.cos(offset * freqs).mean().item()})
    return out


result = rotary_spread(generator)

print(
    sdpa.markdown_table(
        ["d_k", "offset", "std of q·R k (√d_k)", "largest norm change",
         "q = k: mean q·R q / d_k (mean cos(offset θ_m))"],
        [(r["d_k"], r["offset"], f"{sdpa.fmt(r['std_rotary'])} ({sdpa.fmt(math.sqrt(r['d_k']))})",
          f"{r['norm_change']:.1e}",
          f"{sdpa.fmt(r['same_mean'])} ({sdpa.fmt(r['same_predicted'])})") for r in result],
        align="rrrrr",
        caption=f"{N_PAIRS:,} (q, k) pairs per line with unit-variance components, keys at "
        "random positions below 4096, queries offset positions later; base 10,000, Llama's "
        "half-split layout. Without rotation the same pairs give a std of "
        + " and ".join(sdpa.fmt(r["std_plain"]) for r in result if r["offset"] == 0)
        + ". Norm change: the largest |‖R q‖ − ‖q‖| / ‖q‖ (float32 rounding).",
    )
)
