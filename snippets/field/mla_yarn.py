"""DeepSeek-V3's logit scale: 1/sqrt(128 + 64), times YaRN's mscale squared.

Multi-head latent attention takes q·k over 192 components (128 without position, 64 with
rotary embeddings) and multiplies it by 192^-0.5; when the context is extended with YaRN
by a factor F, it multiplies that scale by mscale² with mscale = 0.1 ln(F) + 1 (the
inference code's defaults: F = 40, mscale = 1). With unit-variance q and k components the
logits' standard deviation is then mscale² instead of 1. We read the site's survey of
rows at initialisation for 192 components, times each scale.
"""


import sdpa
from sdpa import survey
from sdpa.variants import yarn_mscale

QK_HEAD_DIM = 128 + 64  # qk_nope_head_dim + qk_rope_head_dim
FACTORS = [1, 4, 16, 40]  # rope_factor; 1: the trained context, 40: DeepSeek-V3's default
KEYS = [64, 1024]


def mla_scales(factors=FACTORS, keys=KEYS):
    out = []
    for factor in factors:
        multiplier = yarn_mscale(factor) ** 2
        scale = QK_HEAD_DIM**-0.5 * multiplier
        for n_keys in keys:
            rows = survey.rows(QK_HEAD_DIM, scale, n_keys)
            out.append({"rope_factor": factor, "n_keys": n_keys, "multiplier": multiplier,
                        "scale": scale, "logit_std": rows.z.std().item(),
                        "one_hot": rows.one_hot(),
                        "effective_keys": rows.effective_keys.median().item(),
                        "effective_share": rows.effective_keys.median().item() / n_keys,
                        "logit_std_se": survey.standard_error(rows.z.std(dim=-1))})
    return out


result = mla_scales()

print(
    sdpa.markdown_table(
        ["rope_factor F", "mscale² = (0.1 ln F + 1)²", "softmax_scale", "keys",
         "std of logits", "median keys in play (share)"],
        [(r["rope_factor"], f"{r['multiplier']:.3f}", f"{r['scale']:.4f}", r["n_keys"],
          r["logit_std"], f"{sdpa.fmt(r['effective_keys'])} ({r['effective_share']:.0%})")
         for r in result],
        align="rrrrrr",
        caption=f"q·k over {QK_HEAD_DIM} unit-variance components, {survey.N_ROWS} rows per "
        f"line, times softmax_scale = {QK_HEAD_DIM}^-1/2 · mscale². F = 1 is the trained "
        f"context (no YaRN); √{QK_HEAD_DIM} · {QK_HEAD_DIM}^-1/2 = 1, so the std is the "
        "multiplier. Keys in play: e^entropy of a row. No row is one-hot (largest weight above "
        f"0.99) in any line: {max(r['one_hot'] for r in result):.0%} at most.",
    )
)
