"""The site's models as ``torch.nn.Module``s: the recall models (one head, and one block of
several heads) and a small GPT.

In the GPT (:class:`CausalSelfAttention`) the line the site is about reads like the
formula::

    att = (q @ k.transpose(-2, -1)) * scale

The recall models (:class:`RecallHead`, :class:`RecallBlock`) fold ``W_K`` into the
query instead: with k_j = W_K x_j, q . k_j = (q W_K) . x_j, so they compute
``(q @ W_K @ pairs^T) * scale`` (and read the values as ``p @ pairs @ W_V^T``) without
ever building the n keys and values: about n times fewer multiplications for one query
against n pairs. The numbers are the formula's: ``tests/test_library.py`` checks both
models against ``(q @ k.transpose(-2, -1)) * scale`` written out
(``test_recall_head_computes_the_textbook_attention`` and
``test_recall_block_equals_textbook_multi_head_attention``).

Weights start from ``nn.Linear``'s own initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
(variance 1/(3 fan_in)), unless :func:`init_unit_variance` re-draws them as
N(0, 1/fan_in): on unit-variance inputs every q and k component then has variance 1, the
textbook assumption. Build a model inside ``sdpa.runtime.seeded(seed)`` to fix its draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from sdpa.attention import Scale, entropy, softcap


class RecallOutput(NamedTuple):
    """What :class:`RecallHead` computes for each sequence."""

    logits: torch.Tensor  # (..., n_values) the class scores
    attention: torch.Tensor  # (..., n_pairs) the query's attention weights
    scores: torch.Tensor  # (..., n_pairs) the softmax input, scale included


class RecallHead(nn.Module):
    """One attention head that reads the value paired with the queried key.

    ``q = W_Q x_query``, ``k_j = W_K x_j``, ``v_j = W_V x_j`` (d_k each);
    ``p = softmax(scale * q . k_j)`` over the pairs; class scores ``W_O sum_j p_j v_j``.
    The scale is stored as its logarithm, so that a learned scale (a "learned
    temperature", ``learn_scale=True``) stays positive. ``W_K`` is folded into the query
    (see the module docstring; ``test_recall_head_computes_the_textbook_attention``
    checks it against the formula).
    """

    def __init__(self, d_model: int, d_k: int, n_values: int, scale: float,
                 learn_scale: bool = False):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_k, bias=False)
        self.W_K = nn.Linear(d_model, d_k, bias=False)
        self.W_V = nn.Linear(d_model, d_k, bias=False)
        self.W_O = nn.Linear(d_k, n_values, bias=False)
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)), requires_grad=learn_scale)

    def forward(self, query: torch.Tensor, pairs: torch.Tensor) -> RecallOutput:
        """``query`` (..., d_model): one query token per sequence; ``pairs`` (..., n, d_model)."""
        return self.attend(self.W_Q(query), pairs)

    def attend(self, q: torch.Tensor, pairs: torch.Tensor) -> RecallOutput:
        """The rest of the forward pass from the query vector ``q`` (..., d_k)."""
        q = q.unsqueeze(-2)  # (..., 1, d_k): one row of attention per sequence
        # k = W_K(pairs) = pairs @ W_K^T, so q @ k^T = q @ W_K @ pairs^T, and likewise
        # p @ v = p @ pairs @ W_V^T. Python multiplies left to right: these products never
        # build the (n x d_k) keys and values, n times less work than projecting every pair.
        att = (q @ self.W_K.weight @ pairs.transpose(-2, -1)) * self.log_scale.exp()
        p = torch.softmax(att, dim=-1)  # (..., 1, n)
        out = self.W_O(p @ pairs @ self.W_V.weight.T)
        return RecallOutput(out.squeeze(-2), p.squeeze(-2), att.squeeze(-2))


class RecallBlock(nn.Module):
    """The recall task read by one pre-LayerNorm transformer block of several heads.

    The realistic shape of :class:`RecallHead`: ``n_heads`` heads of ``d_k`` each with
    d_model = n_heads x d_k, a residual stream and LayerNorm. The tokens (the pairs, then
    the query) are normalised; in each head the query's position attends to the pairs'
    positions; the heads' outputs are concatenated, projected by ``W_O``
    and added to the query token (the residual stream); a final LayerNorm and ``head``
    give the class scores. Only the query's row is computed, since the answer is read
    there (a causal model's last position would compute the same). The query does not
    attend to its own position: its token E_key[k] would out-score its match
    (E_key[k] + E_val[v]) / sqrt(2) under any weights that match keys, a decoy that a
    head must first learn to avoid (a causal mask that hides the diagonal does the same). As in
    :class:`RecallHead`, each head folds ``W_K`` into the query and ``W_V`` into the read
    (``test_recall_block_equals_textbook_multi_head_attention`` checks it).
    """

    def __init__(self, n_heads: int, d_k: int, n_values: int, scale: float,
                 learn_scale: bool = False):
        super().__init__()
        d_model = n_heads * d_k
        self.n_heads = n_heads
        self.ln_1 = nn.LayerNorm(d_model, bias=False)
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)
        self.ln_f = nn.LayerNorm(d_model, bias=False)
        self.head = nn.Linear(d_model, n_values, bias=False)
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)), requires_grad=learn_scale)

    def forward(self, query: torch.Tensor, pairs: torch.Tensor) -> RecallOutput:
        """``query`` (..., d_model), ``pairs`` (..., n, d_model); attention is per head over
        the pairs: (..., n_heads, n)."""
        x = self.ln_1(pairs)  # (..., n, d_model): the keys and values
        h = self.n_heads
        q = self.W_Q(self.ln_1(query)).unflatten(-1, (h, -1))  # (..., h, d_k)
        W_K = self.W_K.weight.unflatten(0, (h, -1))  # (h, d_k, d_model): head i's rows
        W_V = self.W_V.weight.unflatten(0, (h, -1))
        # Per head, (q @ k.transpose(-2, -1)) * scale with k_j = W_K x_j is q W_K x_j: fold
        # W_K into the query instead of projecting every token (and W_V into the read),
        # as RecallHead does. Same numbers, several times less work.
        att = torch.einsum("...hk,hkd,...td->...ht", q, W_K, x) * self.log_scale.exp()
        p = torch.softmax(att, dim=-1)  # (..., h, n + 1)
        read = torch.einsum("...ht,...td,hkd->...hk", p, x, W_V).flatten(-2)  # heads, concatenated
        out = self.head(self.ln_f(query + self.W_O(read)))  # the residual stream, then LayerNorm
        return RecallOutput(out, p, att)


def init_unit_variance(model: nn.Module) -> nn.Module:
    """Re-draw every ``nn.Linear`` weight as N(0, 1/fan_in) from torch's global generator."""
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            nn.init.normal_(layer.weight, std=layer.in_features**-0.5)
    return model


# ------------------------------------------------------------------ a small GPT


@dataclass(frozen=True)
class GPTConfig:
    """A small nanoGPT-style causal transformer and its attention options.

    scale:   the logit factor's rule (``Scale.INV_SQRT``: 1/sqrt(d_head); ``Scale.NONE``).
    qk_norm: None, "rms" or "layer": normalise each head's q and k over d_head and multiply
             by a learned gain (one per head dimension, shared by the heads of a layer, as
             in Qwen3 and Gemma 3); ``scale`` still applies.
    softcap: replace each logit z by softcap * tanh(z / softcap) (Gemma 2, Grok-1).
    qk_init: multiply W_Q and W_K's initial draw by this (every other weight as drawn).
    qk_lr:   multiply W_Q and W_K's learning rate under Adam by this, leaving their start
             and every other weight alone: written as W = qk_lr * W' with W' the trained
             weight, starting at W's draw / qk_lr (Adam moves W' by about the rate whatever
             its gradient, so W moves qk_lr times as far); in the forward pass the factor
             qk_lr^2 joins the logit scale, so the model computes the same function.
             (``qk_init`` and ``qk_lr`` are the two axes of the W_Q/W_K plane.)
    """

    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 32
    d_head: int = 16
    mlp_ratio: int = 2
    vocab: int = 8
    context: int = 16
    scale: Scale = Scale.INV_SQRT
    qk_norm: str | None = None
    softcap: float | None = None
    init_std: float = 0.02  # GPT-2's
    qk_init: float = 1.0
    qk_lr: float = 1.0

    @property
    def label(self) -> str:
        """How tables and legends name the attention options, e.g. "QK-norm + 1/√d_k"."""
        options = (("QK-norm", self.qk_norm), ("soft-cap", self.softcap))
        extras = [name for name, on in options if on]
        if self.qk_init != 1.0:
            extras.append(f"W_Q, W_K start ×{self.qk_init:.3g}")
        if self.qk_lr != 1.0:
            extras.append(f"W_Q, W_K rate ×{self.qk_lr:.3g}")
        if self.scale is Scale.NONE:
            return ", ".join(extras + ["no factor"])
        return " + ".join(extras + [self.scale.label])


class AttentionStats(NamedTuple):
    """What one attention layer reports about its logits (detached)."""

    max_logit: torch.Tensor  # the largest logit a softmax saw
    max_raw: torch.Tensor  # the same before the soft cap
    entropy: torch.Tensor  # (heads,) mean entropy of the rows after the first, nats


def _norm(kind: str, size: int) -> nn.Module:
    """RMSNorm or LayerNorm (no bias) with a learned gain."""
    if kind == "rms":
        return nn.RMSNorm(size, eps=1e-6)
    if kind == "layer":
        return nn.LayerNorm(size, eps=1e-6, bias=False)
    raise ValueError(f"qk_norm must be None, 'rms' or 'layer', not {kind!r}")


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with the scale rule, QK-norm and soft cap of ``config``."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        inner = config.n_heads * config.d_head
        self.c_attn = nn.Linear(config.d_model, 3 * inner, bias=False)
        self.c_proj = nn.Linear(inner, config.d_model, bias=False)
        if config.qk_norm:
            self.q_norm = _norm(config.qk_norm, config.d_head)
            self.k_norm = _norm(config.qk_norm, config.d_head)
        # A buffer, not a Python number: arms that differ only in their scale rule can then
        # train as one ensemble (sdpa.training.Ensemble stacks buffers).
        factor = config.scale.factor(config.d_head) * config.qk_lr**2
        self.register_buffer("scale", torch.tensor(factor))
        causal = torch.ones(config.context, config.context, dtype=torch.bool).tril()
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, AttentionStats]:
        c = self.config
        B, T, _ = x.shape
        qkv = self.c_attn(x).view(B, T, 3, c.n_heads, c.d_head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # (B, heads, T, d_head) each
        if c.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        att = (q @ k.transpose(-2, -1)) * self.scale
        raw = att
        if c.softcap:
            att = softcap(att, c.softcap)
        masked = ~self.causal[:T, :T]
        att = att.masked_fill(masked, float("-inf"))
        p = torch.softmax(att, dim=-1)
        y = (p @ v).transpose(1, 2).reshape(B, T, c.n_heads * c.d_head)
        with torch.no_grad():
            max_logit = att.amax()
            stats = AttentionStats(
                max_logit=max_logit,
                max_raw=raw.masked_fill(masked, float("-inf")).amax() if c.softcap else max_logit,
                entropy=entropy(p[..., 1:, :]).mean(dim=(0, 2)),  # row 0 sees one key
            )
        return self.c_proj(y), stats


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.d_model, config.mlp_ratio * config.d_model, bias=False)
        self.c_proj = nn.Linear(config.mlp_ratio * config.d_model, config.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm: x + attention(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model, eps=1e-6, bias=False)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model, eps=1e-6, bias=False)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, AttentionStats]:
        y, stats = self.attn(self.ln_1(x))
        x = x + y
        return x + self.mlp(self.ln_2(x)), stats


class GPT(nn.Module):
    """Token and position embeddings, ``n_layers`` blocks, a final LayerNorm, an unembedding.

    Initialised as GPT-2 (and nanoGPT): every weight N(0, init_std^2), the projections
    back into the residual stream N(0, init_std^2 / (2 n_layers)), gains 1.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab, config.d_model)
        self.wpe = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model, eps=1e-6, bias=False)
        self.lm_head = nn.Linear(config.d_model, config.vocab, bias=False)
        for name, weight in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(weight, std=config.init_std / math.sqrt(2 * config.n_layers))
            elif weight.dim() == 2:
                nn.init.normal_(weight, std=config.init_std)
        if (config.qk_init, config.qk_lr) != (1.0, 1.0):
            # the query and key rows start qk_init times their draw, and are trained as
            # W' = W / qk_lr (see GPTConfig)
            with torch.no_grad():
                for block in self.blocks:
                    block.attn.c_attn.weight[:2 * config.n_heads * config.d_head] *= (
                        config.qk_init / config.qk_lr)

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, list[AttentionStats]]:
        """Next-token logits (batch, tokens, vocab) and each layer's attention statistics."""
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[-1], device=idx.device))
        stats = []
        for block in self.blocks:
            x, layer_stats = block(x)
            stats.append(layer_stats)
        return self.lm_head(self.ln_f(x)), stats


def qk_norm_bound(config: GPTConfig, state: dict[str, torch.Tensor]) -> torch.Tensor:
    """The largest logit QK-norm (RMS) allows: scale * d_head * max|g_q| * max|g_k|.

    Cauchy-Schwarz on the normalised vectors, whose norm is at most sqrt(d_head) * max|g|;
    the largest over the layers. ``state`` maps names to weights and buffers, as
    ``model.state_dict()`` does; a leading members axis carries through.
    """
    def bound(i: int) -> torch.Tensor:
        attn = f"blocks.{i}.attn"
        gains = [state[f"{attn}.{w}_norm.weight"].abs().amax(-1) for w in ("q", "k")]
        return gains[0] * gains[1] * state[f"{attn}.scale"]

    return torch.stack([bound(i) for i in range(config.n_layers)]).amax(0) * config.d_head
