"""How wide the logits start under GPT-2's initialisation: derived, then measured.

With every weight drawn N(0, sigma_W^2) and LayerNorm'd inputs (unit-variance components),
a query component is a sum of d_model terms, variance d_model sigma_W^2, and so is a key
component; q.k sums d_k products of two of them (d_k: the model's d_head), so its standard
deviation is sqrt(d_k) d_model sigma_W^2 before any factor. We measure it on the first layer
of freshly built models, on the corpus's own text: for the study's two sizes the mean over
eight weight draws (one draw spreads its heads' logits by a few percent), and for GPT-Neo
1.3B's widths one draw (its Hugging Face initialiser range is the same 0.02).
"""

import math

import torch

import sdpa
from sdpa.gpt import gpt_model
from sdpa.language import SIZES
from sdpa.models import GPTConfig
from sdpa.tasks import text_batch, text_corpus

generator = sdpa.seed(0)  # the text windows; the models are built from seeds 0, 1, ...
SHAPES = {"quick size": (SIZES["quick"].model, 8), "full size": (SIZES["full"].model, 8),
          "GPT-Neo 1.3B widths": (GPTConfig(n_layers=1, n_heads=16, d_model=2048, d_head=128,
                                            vocab=text_corpus().vocab, context=64), 1)}


def measured_spread(config, seed, generator, windows=8):
    """The std of the first layer's unscaled logits, one model, ``windows`` of the text."""
    model = gpt_model(config, seed)
    inputs, _ = text_batch(text_corpus().train, windows, config.context, generator)
    with torch.no_grad():
        x = model.wte(inputs) + model.wpe(torch.arange(config.context))
        block = model.blocks[0]
        qkv = block.attn.c_attn(block.ln_1(x)).view(windows, config.context, 3,
                                                    config.n_heads, config.d_head)
        q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
        return (q @ k.transpose(-2, -1)).std().item()  # no factor


def initial_spread(generator):
    rows = []
    for name, (config, draws) in SHAPES.items():
        spreads = torch.tensor([measured_spread(config, seed, generator) for seed in range(draws)])
        predicted = math.sqrt(config.d_head) * config.d_model * config.init_std**2
        rows.append({"shape": name, "d_model": config.d_model, "d_head": config.d_head,
                     "draws": draws, "predicted": predicted, "measured": spreads.mean().item(),
                     "per_draw": spreads.tolist(),
                     "scaled": spreads.mean().item() / math.sqrt(config.d_head)})
    return rows


result = initial_spread(generator)

print(sdpa.markdown_table(
    ["shape", "d_model", "d_k", "predicted std of q·k", "measured", "measured × 1/√d_k"],
    [(r["shape"], r["d_model"], r["d_head"], r["predicted"], r["measured"], r["scaled"])
     for r in result],
    caption="The spread of the logits at initialisation, first layer, eight windows of the "
    "text per model; the study's sizes: the mean over eight weight draws. Predicted: "
    "√d_k · d_model · 0.02². At these widths an unscaled head starts nearly uniform; "
    "GPT-Neo's width makes the same initialisation start wide.",
))
