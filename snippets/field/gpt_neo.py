"""GPT-Neo's unscaled attention at initialisation, under the two initialisations it has.

GPT-Neo multiplies q·k by nothing. Its logits at initialisation depend on how W_Q and
W_K start. Hugging Face's code, training from scratch, draws every weight from
N(0, 0.02²). EleutherAI's Mesh TensorFlow code, which trained the released models, draws
W_Q from N(0, 1/(d_model d_head)) and W_K from N(0, 1/d_model): the factor folded into
W_Q, as in T5. Beside them: a 1/sqrt(d_head) head with GPT-2's N(0, 0.02²), and the site's
unit-variance unscaled head. Inputs are LayerNorm'd tokens (each has mean 0 and variance
1), as GPT-Neo's ln_1 gives them at initialisation; queries and keys come from different
tokens, and four heads are drawn per model.
"""

import math

import torch

import sdpa
from sdpa.attention import random_qk, scores
from sdpa.survey import Rows

generator = sdpa.seed(11)
HUB = "https://huggingface.co/EleutherAI"
#: The released models' widths (Hugging Face configs): name, hidden_size, num_heads.
MODELS = [("GPT-Neo 125M", 768, 12), ("GPT-Neo 1.3B", 2048, 16), ("GPT-Neo 2.7B", 2560, 20)]
SIGMA = 0.02  # initializer_range
N_TOKENS, N_HEADS, N_KEYS = 256, 4, 64


def weights(d_model, d_head, stds, generator):
    """W_Q and W_K of shape (d_model, d_head) with the given standard deviations."""
    return [torch.randn(d_model, d_head, generator=generator) * std for std in stds]


def head_logits(d_model, d_head, arm, generator):
    """Logits of N_HEADS fresh heads on LayerNorm'd tokens, (heads, tokens, tokens)."""
    if arm == "unit":  # the textbook model: unit-variance q and k components, no factor
        pairs = [random_qk(N_TOKENS, N_TOKENS, d_head, generator) for _ in range(N_HEADS)]
        return torch.stack([scores(q, k) for q, k in pairs])
    stds = {"hf": (SIGMA, SIGMA), "mesh": ((d_model * d_head) ** -0.5, d_model**-0.5),
            "gpt2": (SIGMA, SIGMA)}[arm]
    scale = 1 / math.sqrt(d_head) if arm == "gpt2" else 1.0
    x_q, x_k = (torch.nn.functional.layer_norm(torch.randn(N_TOKENS, d_model, generator=generator),
                                               (d_model,)) for _ in range(2))
    out = []
    for _ in range(N_HEADS):
        w_q, w_k = weights(d_model, d_head, stds, generator)
        out.append(scores(x_q @ w_q, x_k @ w_k, scale))
    return torch.stack(out)


def predicted_std(d_model, d_head, arm):
    """sqrt(d_head) * Var(q_i)^(1/2) * Var(k_i)^(1/2) * scale, with Var = d_model * std^2."""
    return {"hf": math.sqrt(d_head) * d_model * SIGMA**2, "mesh": 1.0,
            "gpt2": d_model * SIGMA**2, "unit": math.sqrt(d_head)}[arm]


def gpt_neo_heads(generator):
    rows = []
    for name, d_model, heads in MODELS:
        d_head = d_model // heads
        for arm in ("hf", "mesh", "gpt2", "unit"):
            z = head_logits(d_model, d_head, arm, generator)
            per_head = z.flatten(1).std(dim=1)
            rows_64 = Rows(z[:, :, :N_KEYS].reshape(-1, N_KEYS).double())
            rows.append({"model": name, "d_model": d_model, "heads": heads, "d_head": d_head,
                         "arm": arm, "d_model_sigma2": d_model * SIGMA**2,
                         "logit_std": z.std().item(), "head_std_spread": per_head.std().item(),
                         "predicted_std": predicted_std(d_model, d_head, arm),
                         "one_hot": rows_64.one_hot(),
                         "effective_keys": rows_64.effective_keys.median().item()})
    return rows


result = gpt_neo_heads(generator)
ARMS = {"hf": "no factor, all weights N(0, 0.02²): Hugging Face, from scratch",
        "mesh": "no factor, W_Q folded: Mesh TensorFlow, the released runs",
        "gpt2": "1/√d_k, all weights N(0, 0.02²): GPT-2 style",
        "unit": "no factor, unit-variance q and k, as the survey draws them (another draw)"}
cells = {(r["model"], r["arm"]): r for r in result}


def cell(r):
    return (f"{sdpa.fmt(r['logit_std'])} ({sdpa.fmt(r['predicted_std'])}) · "
            f"{r['one_hot']:.0%} · {sdpa.fmt(r['effective_keys'])}")


print(
    sdpa.markdown_table(
        ["head", *(f"{name} (d_k = {d_model}/{heads} = {d_model // heads})"
                   for name, d_model, heads in MODELS)],
        [("d_model σ_W², σ_W = 0.02", *(sdpa.fmt(d_model * SIGMA**2) for _, d_model, _ in MODELS)),
         *((label, *(cell(cells[name, arm]) for name, _, _ in MODELS))
           for arm, label in ARMS.items())],
        align="lrrr",
        caption="Each cell: the logits' standard deviation (its prediction) · the share of "
        f"one-hot rows · the median keys in play, over {N_HEADS} heads of {N_TOKENS} queries "
        f"against {N_TOKENS} keys. Predicted: √d_k · d_model σ_W² for N(0, σ_W²) weights, "
        "d_model σ_W² with the 1/√d_k factor, 1 for the folded initialisation, √d_k for "
        f"unit variance. One-hot: largest weight above 0.99, in rows of the first {N_KEYS} "
        "keys; keys in play: e^entropy of such a row.",
    )
)
