"""Head dimensions and logit scales of production models, each row from its source.

The configuration values below are copied from each model's official code or published
configuration (the source column links it). From them the snippet derives the head
dimension, the factor the logits are multiplied by, and what that factor does to unit-
variance queries and keys: the logit spread at initialisation under the textbook model,
measured on samples (with the model's logit soft cap applied where it has one).
"""

import math

import sdpa
from sdpa.attention import random_qk, softcap

generator = sdpa.seed(0)
HF = "https://github.com/huggingface/transformers/blob/main/src/transformers/models"
MODELS = [
    # name, d_model, query heads, head_dim (None: d_model / heads), scale rule, soft cap,
    # stabiliser, source
    ("Transformer base (2017)", 512, 8, None, "1/sqrt(head_dim)", None, "none",
     "[arXiv 1706.03762](https://arxiv.org/abs/1706.03762)"),
    ("GPT-3 175B", 12288, 96, None, "1/sqrt(head_dim)", None, "none",
     "[arXiv 2005.14165](https://arxiv.org/abs/2005.14165), table 2.1"),
    ("T5 base", 768, 12, 64, "1 (none)", None, "init std of W_Q (d_model·d_kv)^-1/2",
     f"[modeling_t5.py]({HF}/t5/modeling_t5.py)"),
    ("GPT-Neo 1.3B", 2048, 16, None, "1 (none)", None,
     "init std of W_Q (d_model·d_head)^-1/2 (Mesh TensorFlow)",
     f"[modeling_gpt_neo.py]({HF}/gpt_neo/modeling_gpt_neo.py), "
     "[EleutherAI/gpt-neo](https://github.com/EleutherAI/gpt-neo); "
     "[field](field.md#gpt-neo-no-factor-in-the-forward-pass)"),
    ("Llama 3 8B", 4096, 32, None, "1/sqrt(head_dim)", None, "none",
     "[arXiv 2407.21783](https://arxiv.org/abs/2407.21783), table 3"),
    ("Gemma 2 9B", 3584, 16, 256, "query_pre_attn_scalar = 256", 50.0,
     "tanh soft cap 50 on logits",
     f"[modeling_gemma2.py]({HF}/gemma2/modeling_gemma2.py)"),
    ("Gemma 2 27B", 4608, 32, 128, "query_pre_attn_scalar = 144", 50.0,
     "tanh soft cap 50 on logits",
     f"[modeling_gemma2.py]({HF}/gemma2/modeling_gemma2.py)"),
    ("Gemma 3 27B", 5376, 32, 128, "query_pre_attn_scalar = 168", None,
     "RMSNorm on q and k per head",
     f"[modeling_gemma3.py]({HF}/gemma3/modeling_gemma3.py)"),
    ("Qwen3 8B", 4096, 32, 128, "1/sqrt(head_dim)", None, "RMSNorm on q and k per head",
     f"[modeling_qwen3.py]({HF}/qwen3/modeling_qwen3.py)"),
    ("OLMo 2 7B", 4096, 32, None, "1/sqrt(head_dim)", None,
     "RMSNorm on the whole q and k projections",
     f"[modeling_olmo2.py]({HF}/olmo2/modeling_olmo2.py)"),
    ("Grok-1", 6144, 48, 128, "attn_output_multiplier = 0.0884", 30.0,
     "tanh soft cap 30 on logits",
     "[xai-org/grok-1](https://github.com/xai-org/grok-1/blob/main/model.py)"),
]
SAMPLES = 20_000


def scale_of(rule: str, head_dim: int) -> float:
    """The factor multiplying q·k: 1/sqrt(head_dim), 1/sqrt(query_pre_attn_scalar), a constant."""
    if rule == "1/sqrt(head_dim)":
        return 1 / math.sqrt(head_dim)
    if rule.startswith("query_pre_attn_scalar"):
        return float(rule.split("=")[1]) ** -0.5
    if rule.startswith("attn_output_multiplier"):
        return 1 / math.sqrt(128)  # the code's constant 0.08838834764831845 is 128^-0.5
    return 1.0


def table(generator):
    rows = []
    for name, d_model, heads, head_dim, rule, cap, stabiliser, source in MODELS:
        d = head_dim or d_model // heads
        c = scale_of(rule, d)
        q, k = random_qk(SAMPLES, SAMPLES, d, generator, device=sdpa.device())
        folded = rule == "1 (none)"  # T5, GPT-Neo: the factor is in W_Q's init, Var(q_i) = 1/d
        if folded:
            q = q / math.sqrt(d)
        z = c * (q * k).sum(-1)  # SAMPLES independent (q, k) pairs
        if cap:
            z = softcap(z, cap)
        rows.append({"model": name, "d_model": d_model, "heads": heads, "head_dim": d,
                     "head_dim_given": head_dim is not None, "rule": rule, "scale": c,
                     "folded": folded,
                     "scale_times_sqrt_d": c * math.sqrt(d), "logit_std": z.std().item(),
                     "stabiliser": stabiliser, "source": source})
    return rows


result = table(generator)

print(
    sdpa.markdown_table(
        ["model", "d_model", "query heads", "head dim", "logit factor (as configured)",
         "factor × √head dim", "logit std at init", "other stabiliser", "source"],
        [(r["model"], r["d_model"], r["heads"], r["head_dim"], f"{r['rule']} → {r['scale']:.4f}",
          r["scale_times_sqrt_d"], r["logit_std"], r["stabiliser"], r["source"]) for r in result],
        align="lrrrlrrll",
        caption="Head dimension: the config's <code>head_dim</code>, else d_model / heads. The "
        "factor × √head dim is 1 for the plain 1/√d_k rule. Logit std: measured on "
        f"{SAMPLES:,} (q, k) pairs per row with unit-variance components, after any soft cap; "
        "for T5 and GPT-Neo q's components have variance 1/head dim, as their W_Q "
        "initialisation gives.",
    )
)
