"""Gemma 4's head at initialisation: RMSNorm on q and k with unit gains, and scale 1.

Gemma 4 normalises every query and key vector with RMSNorm, whose learned gain starts at
ones (Hugging Face's ``Gemma4RMSNorm`` creates ``torch.ones(dim)`` and multiplies by it),
and then multiplies q·k by 1.0. After the norm each vector has mean square exactly 1,
whatever its projection's initialisation, so q·k has standard deviation sqrt(d_head) for
independent directions. We project with PyTorch's default initialisation scale (component
variance 1/3) to show that the norm erases it, and compare with the same head under a
1/sqrt(d_head) scale.
"""

import math

import torch

import sdpa
from sdpa.attention import qk_norm, random_qk, scores
from sdpa.survey import Rows

generator = sdpa.seed(47)
HEAD_DIMS = [256, 512]  # Gemma 4's sliding-window and global layers
N_QUERIES, N_KEYS, KEY_SETS = 32, 64, 32


def gemma4_heads(generator):
    out = []
    for d in HEAD_DIMS:
        gain = torch.ones(d)  # the gains' initial value
        pairs = [random_qk(N_QUERIES, N_KEYS, d, generator, std=3**-0.5) for _ in range(KEY_SETS)]
        normed = [(qk_norm(q) * gain, qk_norm(k) * gain) for q, k in pairs]
        raw = torch.cat([scores(q, k) for q, k in normed]).double()
        for label, scale in (("1 (Gemma 4)", 1.0), ("1/√d_k", 1 / math.sqrt(d))):
            rows = Rows(raw * scale)
            out.append({"d_head": d, "scale": label, "factor": scale,
                        "q_mean_square": torch.cat([q for q, _ in normed]).pow(2).mean(-1)
                        .sub(1).abs().max().item(),
                        "logit_std": rows.z.std().item(), "one_hot": rows.one_hot(),
                        "effective_keys": rows.effective_keys.median().item()})
    return out


result = gemma4_heads(generator)

print(
    sdpa.markdown_table(
        ["d_k", "logit factor", "largest |mean square − 1| after the norm",
         "std of logits (√d_k · factor)", "one-hot rows", "median keys in play"],
        [(r["d_head"], r["scale"], f"{r['q_mean_square']:.1e}",
          f"{sdpa.fmt(r['logit_std'])} ({sdpa.fmt(math.sqrt(r['d_head']) * r['factor'])})",
          f"{r['one_hot']:.1%}", r["effective_keys"]) for r in result],
        align="rlrrrr",
        caption=f"{KEY_SETS * N_QUERIES} rows of {N_KEYS} keys per line; q and k components "
        "of variance 1/3 before the norm, RMSNorm with unit gains after it (ε = 10⁻⁶).",
    )
)
