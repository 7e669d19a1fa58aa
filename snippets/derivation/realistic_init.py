"""How far is the unit-variance model from a real freshly initialised head?

Tokens pass through LayerNorm, then through query and key projections built as
``nn.Linear`` layers: once with PyTorch's default initialisation (uniform weights of
variance 1/(3 d_model)), once with N(0, 1/d_model) weights, and once with GPT-2's
N(0, 0.02²). We measure the variance of one query component and the standard deviation of
the logits, unscaled and scaled.
"""

import math

import torch
from torch import nn

import sdpa
from sdpa.attention import scores

generator = sdpa.seed(3)
#: Weight standard deviations besides PyTorch's default, as functions of d_model.
STDS = {"normal": lambda d_model: d_model**-0.5, "gpt2": lambda d_model: 0.02}
SHAPES = [(512, 64), (4096, 128)]  # (d_model, d_k): GPT-2-small-like and Llama-like heads
N_TOKENS, N_HEADS = 256, 8


def projection(d_model, d_k, init):
    layer = nn.Linear(d_model, d_k)  # PyTorch's default: Var(w) = 1/(3 d_model)
    if init in STDS:
        nn.init.normal_(layer.weight, std=STDS[init](d_model))
        nn.init.zeros_(layer.bias)
    return layer


def measure_realistic_heads(generator, shapes=SHAPES):
    dev = sdpa.device()
    rows = []
    for d_model, d_k in shapes:
        tokens = torch.randn(N_TOKENS, d_model, generator=generator)
        tokens = nn.functional.layer_norm(tokens, (d_model,)).to(dev)
        for init in ["default", *STDS]:
            q_var, logits = [], []
            # nn.Linear draws from torch's global generator: seed it, with a seed of its own
            with torch.no_grad(), sdpa.seeded(d_model):
                for _ in range(N_HEADS):
                    w_q = projection(d_model, d_k, init).to(dev)
                    w_k = projection(d_model, d_k, init).to(dev)
                    q, k = w_q(tokens), w_k(tokens)
                    q_var.append(q.var().item())
                    logits.append(scores(q, k).flatten())
            logits = torch.cat(logits)
            rows.append(
                {
                    "d_model": d_model,
                    "d_k": d_k,
                    "init": init,
                    "q_component_var": sum(q_var) / len(q_var),
                    "std_unscaled": logits.std().item(),
                    "std_scaled": (logits / math.sqrt(d_k)).std().item(),
                }
            )
    return rows


result = measure_realistic_heads(generator)
LABELS = {"default": "`nn.Linear` default", "normal": "N(0, 1/d_model)",
          "gpt2": "N(0, 0.02²), GPT-2"}

print(
    sdpa.markdown_table(
        ["d_model", "d_k", "initialisation", "Var(q_m)", "std of q·k", "√d_k (unit model)",
         "std of q·k/√d_k"],
        [
            (r["d_model"], r["d_k"], LABELS[r["init"]], r["q_component_var"], r["std_unscaled"],
             math.sqrt(r["d_k"]), r["std_scaled"])
            for r in result
        ],
        align="rrlrrrr",
        caption=f"{N_TOKENS} LayerNormed random tokens, {N_HEADS} freshly initialised heads per "
        "row.",
    )
)
