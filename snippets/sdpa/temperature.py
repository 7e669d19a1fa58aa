"""Helpers shared by the temperature page: a planted matching key, and soft-capping.

``planted_scores`` builds rows in which one key (column 0) leans towards its query,
``k = rho q + sqrt(1 - rho^2) e``, and the other keys are unrelated: the simplest model
of a head that has something to find. ``softcap`` is the tanh logit cap of Gemma 2 and
Grok-1.
"""

from __future__ import annotations

import math

import torch


def planted_scores(n_queries: int, n_keys: int, d_k: int, rho: float, generator: torch.Generator) -> torch.Tensor:
    """Unscaled scores q.k of shape (n_queries, n_keys); column 0 is the matching key.

    Query and key components are standard normal; the matching key is
    ``k = rho q + sqrt(1 - rho^2) e`` with ``e`` independent noise, so its score has mean
    ``rho d_k``, while every other score has mean 0 and variance ``d_k``. The keys are not
    drawn one by one: given ``q``, the score ``q . e`` of an independent standard-normal
    vector is exactly N(0, |q|^2), so drawing it directly gives the same distribution for a
    fraction of the cost (rows of 16,384 keys stay cheap). Sampled on the CPU generator.
    """
    q = torch.randn(n_queries, d_k, generator=generator)
    norm = q.norm(dim=-1, keepdim=True)
    z = norm * torch.randn(n_queries, n_keys, generator=generator)
    z[:, 0] = rho * norm[:, 0] ** 2 + math.sqrt(1.0 - rho**2) * z[:, 0]
    return z


def softcap(z: torch.Tensor, cap: float) -> torch.Tensor:
    """Soft-capping ``cap * tanh(z / cap)``: about ``z`` for small logits, never beyond +-cap."""
    return cap * torch.tanh(z / cap)


# ------------------------------------------------------------------ training experiments
# One recall experiment per head dimension, trained by sdpa.recall (memoised there by its
# frozen config, so every snippet of the page that asks for the same d_k shares one run).

from sdpa.recall import Arm, RecallConfig, forward, init_weights, make_batches, embeddings, tokens  # noqa: E402

#: Training steps of every run on the page, the head dimension of the main table, and
#: the head dimensions of the logit-growth sweep.
TRAIN_STEPS = 120
MAIN_D_K = 128
SWEEP_D_K = (16, 32, 128)
SEEDS = (0, 1, 2)


def scale_arms(d_k: int, extended: bool = False) -> tuple[Arm, ...]:
    """The three scalings; ``extended`` adds the learned scale and the two reparameterisations.

    With s = 1/sqrt(d_k) and r = d_k^(-1/4) (so that s r^2 = 1/d_k):
    "1/d_k reparam." keeps the scale s but multiplies W_Q and W_K, their initialisation
    and their learning rate by r: under Adam it is the 1/d_k arm in disguise.
    "init only" multiplies the initialisation alone: the same forward pass at step 0.
    """
    s, r = d_k**-0.5, d_k**-0.25
    arms = [Arm(1.0, label="none"), Arm(1.0 / d_k, label="1/d_k"), Arm(s, label="1/√d_k")]
    if extended:
        arms += [
            Arm(s, learn_scale=True, label="learned, from 1/√d_k"),
            Arm(s, q_init=r, k_init=r, lr_q=r, lr_k=r, label="1/√d_k, W_Q, W_K init and lr × d_k^-1/4"),
            Arm(s, q_init=r, k_init=r, label="1/√d_k, W_Q, W_K init × d_k^-1/4 only"),
        ]
    return tuple(arms)


def scale_experiment(d_k: int) -> RecallConfig:
    """The page's recall run at head dimension ``d_k`` (all six arms at ``MAIN_D_K``)."""
    return RecallConfig(d_k=d_k, steps=TRAIN_STEPS, seeds=SEEDS, record_every=5,
                        arms=scale_arms(d_k, extended=d_k == MAIN_D_K))


def arm_index(cfg: RecallConfig, label: str) -> int:
    """Position of the arm called ``label`` in ``cfg.arms``."""
    return [arm.label for arm in cfg.arms].index(label)


def init_logit_variance(cfg: RecallConfig, n_batches: int = 4) -> torch.Tensor:
    """Variance of the softmax input at initialisation, per arm (pooled over seeds and batches).

    One forward pass of the recall head (``sdpa.recall.forward``) on the initial weights;
    nothing is trained.
    """
    with torch.no_grad():
        w = init_weights(cfg)
        data = [(make_batches(cfg, s, n_batches), embeddings(cfg, s)) for s in cfg.seeds]
        members = [i for _ in cfg.arms for i in range(len(cfg.seeds))]
        variances = []
        for t in range(n_batches):
            per_seed = [tokens(cfg, {k: v[t] for k, v in b.items()}, e) for b, e in data]
            query = torch.stack([per_seed[i][0] for i in members])
            pairs = torch.stack([per_seed[i][1] for i in members])
            logits = forward(w, torch.zeros(len(members)), query, pairs)["logits"]
            variances.append(logits.flatten(1).var(dim=1))
        by_member = torch.stack(variances).mean(0)
    return by_member.view(len(cfg.arms), len(cfg.seeds)).mean(1)
