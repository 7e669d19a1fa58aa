"""Associative recall learned by one attention head: the site's training experiment.

The task. A sequence holds ``n_pairs`` (key, value) pairs with distinct keys, then a
query key drawn from those pairs; the target is the value paired with it. Tokens are
fixed random embeddings with unit-variance components: a pair token is
``(E_key[k] + E_val[v]) / sqrt(2)``, the query token is ``E_key[k]``. Solving the task
needs the head to put its attention on the pair whose key matches the query.

The model. One attention head, nanoGPT-sized::

    q = x_query W_Q          k_j = x_j W_K          v_j = x_j W_V      (d_k each)
    p = softmax(c * q . k_j)  over the n_pairs pair tokens
    value logits = (sum_j p_j v_j) W_O

``c`` is the arm's logit scale (1, 1/sqrt(d_k), 1/d_k, ...), optionally learned
(log-parameterised, starting at ``c``: a "learned temperature").

Many runs as one computation. Every arm x seed is one *member* of an ensemble: each
weight is stacked along a leading axis (``W_Q`` has shape ``(members, d_model, d_k)``),
the forward pass uses ``torch.einsum``, and the loss is the sum of the members' mean
losses, so each member's gradient is exactly the gradient of its own loss. Adam and SGD
act elementwise, so one optimiser step over the stacked tensors equals independent
steps of the independent runs (per-member learning-rate multipliers included).

Usage::

    from sdpa.recall import Arm, RecallConfig, run
    cfg = RecallConfig(d_k=64, steps=200, seeds=(0, 1, 2),
                       arms=(Arm(1.0), Arm(1 / 8), Arm(1 / 64)))
    h = run(cfg)                    # memoised: same config, same run, once per process
    h["loss"].shape                 # (recorded steps, arms, seeds)
    h["step"]                       # the steps at which each row was recorded

Same config, same numbers, bit for bit: data and initial weights come from CPU
generators seeded from each seed, and the thread count is pinned by ``sdpa.seed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import torch
import torch.nn.functional as F

from sdpa import runtime
from sdpa.runtime import device as default_device

#: What :func:`run` records per member, every ``record_every`` steps.
METRICS = ("loss", "accuracy", "entropy", "max_weight", "max_logit", "grad_q", "grad_k", "grad_v", "scale")


@dataclass(frozen=True)
class Arm:
    """One arm of an experiment: how the logits are scaled and how W_Q, W_K start and learn.

    scale:       the logit multiplier c (1 = no scaling, 1/sqrt(d_k), 1/d_k, ...).
    learn_scale: learn c (as log c, starting at ``scale``) with the other weights.
    init:        "unit" or "default"; None takes the config's ``init``.
    q_init, k_init: multiply the initial W_Q (W_K) by this constant.
    lr_q, lr_k:  multiply the learning rate of W_Q (W_K) by this constant.
    label:       a name for tables and legends (defaults to a description of the arm).
    """

    scale: float = 1.0
    learn_scale: bool = False
    init: str | None = None
    q_init: float = 1.0
    k_init: float = 1.0
    lr_q: float = 1.0
    lr_k: float = 1.0
    label: str = ""


@dataclass(frozen=True)
class RecallConfig:
    """Task, model and optimiser of one batched experiment (hashable: it keys the cache).

    init "unit": every weight N(0, 1/fan_in), so on unit-variance inputs each q and k
    component has variance 1 (the textbook assumption). init "default": PyTorch's
    ``nn.Linear`` default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), variance 1/(3 fan_in),
    so q and k components have variance about 1/3.
    """

    n_keys: int = 32  # key vocabulary
    n_values: int = 32  # value vocabulary (the classes)
    n_pairs: int = 16  # pairs per sequence: the row length of the attention
    batch: int = 64
    d_model: int = 64
    d_k: int = 64  # also d_v
    steps: int = 300
    lr: float = 1e-2
    optimizer: str = "adam"  # "adam" or "sgd"
    init: str = "unit"  # "unit" or "default"
    seeds: tuple[int, ...] = (0, 1, 2)
    arms: tuple[Arm, ...] = field(default_factory=lambda: (Arm(1.0),))
    record_every: int = 1

    @property
    def members(self) -> int:
        return len(self.arms) * len(self.seeds)


# ----------------------------------------------------------------------------- data


def make_batches(cfg: RecallConfig, seed: int, n_batches: int) -> dict[str, torch.Tensor]:
    """``n_batches`` batches of the recall task for one seed (CPU tensors).

    Returns key ids ``(n_batches, batch, n_pairs)``, value ids, the query's pair index
    ``(n_batches, batch)`` and the target value ids.
    """
    g = runtime.generator(10_000 + seed)
    shape = (n_batches, cfg.batch)
    keys = torch.rand(*shape, cfg.n_keys, generator=g).argsort(-1)[..., : cfg.n_pairs]  # distinct keys
    values = torch.randint(cfg.n_values, (*shape, cfg.n_pairs), generator=g)
    where = torch.randint(cfg.n_pairs, shape, generator=g)
    target = values.gather(-1, where[..., None])[..., 0]
    return {"keys": keys, "values": values, "where": where, "target": target}


def embeddings(cfg: RecallConfig, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The fixed random key and value embedding tables of one seed, N(0, 1) entries."""
    g = runtime.generator(20_000 + seed)
    return torch.randn(cfg.n_keys, cfg.d_model, generator=g), torch.randn(cfg.n_values, cfg.d_model, generator=g)


def tokens(cfg: RecallConfig, batch: dict, emb: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """Query tokens ``(..., d_model)`` and pair tokens ``(..., n_pairs, d_model)``."""
    e_key, e_val = emb
    pairs = (e_key[batch["keys"]] + e_val[batch["values"]]) / math.sqrt(2)
    query = e_key[batch["keys"].gather(-1, batch["where"][..., None])[..., 0]]
    return query, pairs


# ---------------------------------------------------------------------------- model


def _weight(g: torch.Generator, fan_in: int, fan_out: int, init: str) -> torch.Tensor:
    if init == "unit":
        return torch.randn(fan_in, fan_out, generator=g) / math.sqrt(fan_in)
    if init == "default":  # nn.Linear: kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        return (torch.rand(fan_in, fan_out, generator=g) * 2 - 1) / math.sqrt(fan_in)
    raise ValueError(f"init must be 'unit' or 'default', not {init!r}")


def init_weights(cfg: RecallConfig, dev: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Stacked initial weights, member ``a * len(seeds) + s`` for arm a and seed s.

    Arms that share a seed and an init start from the same draw (a paired comparison),
    before their ``q_init`` / ``k_init`` multipliers.
    """
    stacks = {"W_Q": [], "W_K": [], "W_V": [], "W_O": [], "log_scale": []}
    for arm in cfg.arms:
        for seed in cfg.seeds:
            g = runtime.generator(seed)
            init = arm.init or cfg.init
            stacks["W_Q"].append(_weight(g, cfg.d_model, cfg.d_k, init) * arm.q_init)
            stacks["W_K"].append(_weight(g, cfg.d_model, cfg.d_k, init) * arm.k_init)
            stacks["W_V"].append(_weight(g, cfg.d_model, cfg.d_k, init))
            stacks["W_O"].append(_weight(g, cfg.d_k, cfg.n_values, init))
            stacks["log_scale"].append(torch.tensor(math.log(arm.scale)))
    return {name: torch.stack(ws).to(dev).requires_grad_() for name, ws in stacks.items()}


def forward(w: dict, learn: torch.Tensor, query: torch.Tensor, pairs: torch.Tensor) -> dict:
    """The head on stacked inputs: query ``(E, B, d_model)``, pairs ``(E, B, n, d_model)``.

    ``learn`` (E,) is 1.0 for members whose scale is learned: only their ``log_scale``
    receives a gradient.
    """
    log_c = w["log_scale"] * learn + (w["log_scale"] * (1 - learn)).detach()
    # Same numbers as k_j = x_j W_K, v_j = x_j W_V, but cheaper: q . k_j = (q W_K^T) . x_j
    # and sum_j p_j v_j = (sum_j p_j x_j) W_V, so no (n_pairs x d_k) tensor is ever built.
    q = torch.einsum("ebd,edk->ebk", query, w["W_Q"])
    q_back = torch.einsum("ebk,edk->ebd", q, w["W_K"])  # q W_K^T, in model space
    logits = torch.exp(log_c)[:, None, None] * torch.einsum("ebd,ebnd->ebn", q_back, pairs)
    p = torch.softmax(logits, dim=-1)
    mixed = torch.einsum("ebn,ebnd->ebd", p, pairs)  # sum_j p_j x_j
    out = torch.einsum("ebd,edk->ebk", mixed, w["W_V"]) @ w["W_O"]  # (E, B, n_values)
    return {"logits": logits, "p": p, "out": out, "q": q}


def _stacked_inputs(cfg, batches, embs, members_seed, t, dev):
    """Inputs of step ``t`` for every member (members with one seed share its data)."""
    per_seed = [tokens(cfg, {k: b[k][t] for k in b}, e) for b, e in zip(batches, embs)]
    query = torch.stack([per_seed[s][0] for s in members_seed]).to(dev)
    pairs = torch.stack([per_seed[s][1] for s in members_seed]).to(dev)
    target = torch.stack([batches[s]["target"][t] for s in members_seed]).to(dev)
    return query, pairs, target


def _measure(cfg, w, learn, query, pairs, target) -> dict[str, torch.Tensor]:
    """Forward, backward of the summed member losses, and every metric per member."""
    for t in w.values():
        t.grad = None
    f = forward(w, learn, query, pairs)
    loss = F.cross_entropy(f["out"].flatten(0, 1), target.flatten(), reduction="none").view(target.shape).mean(1)
    loss.sum().backward()  # members are independent: each gets the gradient of its own loss
    p = f["p"].detach()
    ent = -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(-1)
    return {
        "loss": loss.detach(),
        "accuracy": (f["out"].argmax(-1) == target).float().mean(1),
        "entropy": ent.mean(1),
        "max_weight": p.max(-1).values.mean(1),
        "max_logit": f["logits"].detach().abs().amax((1, 2)),
        "grad_q": w["W_Q"].grad.flatten(1).norm(dim=1),
        "grad_k": w["W_K"].grad.flatten(1).norm(dim=1),
        "grad_v": w["W_V"].grad.flatten(1).norm(dim=1),
        "scale": torch.exp(w["log_scale"].detach()),
    }


def _setup(cfg: RecallConfig, n_batches: int, dev):
    batches = [make_batches(cfg, s, n_batches) for s in cfg.seeds]
    embs = [embeddings(cfg, s) for s in cfg.seeds]
    members_seed = [s for _ in cfg.arms for s in range(len(cfg.seeds))]
    w = init_weights(cfg, dev)
    per_member = lambda attr: torch.tensor(  # noqa: E731
        [float(getattr(a, attr)) for a in cfg.arms for _ in cfg.seeds], device=dev
    )
    return batches, embs, members_seed, w, per_member


def _shape(cfg: RecallConfig, rows: list[dict]) -> dict[str, torch.Tensor]:
    """Stack recorded rows into ``(rows, arms, seeds)`` CPU tensors."""
    A, S = len(cfg.arms), len(cfg.seeds)
    return {m: torch.stack([r[m] for r in rows]).view(len(rows), A, S).cpu() for m in METRICS}


# ------------------------------------------------------------------------- training


@cache
def run(cfg: RecallConfig, dev: str | None = None) -> dict[str, torch.Tensor]:
    """Train every arm and seed of ``cfg`` together; memoised by the (frozen) config.

    Returns ``{metric: tensor (recorded steps, arms, seeds)}`` for every name in
    :data:`METRICS` (measured on each step's fresh batch *before* that step's update,
    so row 0 is the initialisation), plus ``"step"``. Treat the result as read-only.
    """
    return _train(cfg, dev)


def _train(cfg: RecallConfig, dev: str | None) -> dict[str, torch.Tensor]:
    dev = torch.device(dev) if dev else default_device()
    batches, embs, members_seed, w, per_member = _setup(cfg, cfg.steps + 1, dev)
    learn = per_member("learn_scale")
    lr = {"W_Q": per_member("lr_q"), "W_K": per_member("lr_k")}
    state = {name: (torch.zeros_like(t), torch.zeros_like(t)) for name, t in w.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    rows, steps = [], []
    for t in range(cfg.steps + 1):
        query, pairs, target = _stacked_inputs(cfg, batches, embs, members_seed, t, dev)
        metrics = _measure(cfg, w, learn, query, pairs, target)
        if t % cfg.record_every == 0 or t == cfg.steps:
            rows.append(metrics)
            steps.append(t)
        if t == cfg.steps:
            break
        with torch.no_grad():  # elementwise optimisers on the stacked tensors
            for name, p in w.items():
                g = p.grad
                mult = lr.get(name)
                step_lr = cfg.lr if mult is None else cfg.lr * mult.view(-1, *[1] * (p.dim() - 1))
                if cfg.optimizer == "sgd":
                    p -= step_lr * g
                elif cfg.optimizer == "adam":
                    m, v = state[name]
                    m.mul_(beta1).add_(g, alpha=1 - beta1)
                    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                    m_hat = m / (1 - beta1 ** (t + 1))
                    v_hat = v / (1 - beta2 ** (t + 1))
                    p -= step_lr * m_hat / (v_hat.sqrt() + eps)
                else:
                    raise ValueError(f"optimizer must be 'adam' or 'sgd', not {cfg.optimizer!r}")
    history = _shape(cfg, rows)
    history["step"] = torch.tensor(steps)
    return history


@cache
def at_init(cfg: RecallConfig, n_batches: int = 8, dev: str | None = None) -> dict[str, torch.Tensor]:
    """Every metric at initialisation, averaged over ``n_batches`` fresh batches.

    Returns ``{metric: tensor (arms, seeds)}``; no weight is updated.
    """
    return _at_init(cfg, n_batches, dev)


def _at_init(cfg: RecallConfig, n_batches: int, dev: str | None) -> dict[str, torch.Tensor]:
    dev = torch.device(dev) if dev else default_device()
    batches, embs, members_seed, w, per_member = _setup(cfg, n_batches, dev)
    learn = per_member("learn_scale")
    rows = [_measure(cfg, w, learn, *_stacked_inputs(cfg, batches, embs, members_seed, t, dev)) for t in range(n_batches)]
    return {m: h.mean(0) for m, h in _shape(cfg, rows).items()}


def steps_to(history: dict, metric: str, threshold: float, below: bool = True) -> torch.Tensor:
    """The first recorded step at which ``metric`` crosses ``threshold``, per (arm, seed).

    Returns a float tensor ``(arms, seeds)``; ``inf`` where it never does.
    """
    values = history[metric]
    hit = values <= threshold if below else values >= threshold
    steps = history["step"].float()[:, None, None].expand_as(values)
    return torch.where(hit, steps, torch.full_like(steps, math.inf)).amin(0)


def query_grad_per_example(cfg: RecallConfig, n_batches: int = 4, dev: str | None = None) -> torch.Tensor:
    """The norm of each example's loss gradient with respect to its query vector q, at init.

    Returns ``(arms, seeds, n_batches * batch)``. The gradient of W_Q is the sum over
    examples of ``x_query^T dL/dq``, so this shows which examples carry W_Q's gradient.
    """
    dev = torch.device(dev) if dev else default_device()
    batches, embs, members_seed, w, per_member = _setup(cfg, n_batches, dev)
    learn = per_member("learn_scale")
    norms = []
    for t in range(n_batches):
        query, pairs, target = _stacked_inputs(cfg, batches, embs, members_seed, t, dev)
        f = forward(w, learn, query, pairs)
        f["q"].retain_grad()
        F.cross_entropy(f["out"].flatten(0, 1), target.flatten(), reduction="sum").backward()
        norms.append(f["q"].grad.norm(dim=-1).detach())  # (E, B): example b's loss alone
    return torch.cat(norms, 1).view(len(cfg.arms), len(cfg.seeds), -1).cpu()


def final(history: dict, metric: str = "loss", last: int = 8) -> torch.Tensor:
    """The mean of the last ``last`` recorded values of ``metric``, per (arm, seed)."""
    return history[metric][-last:].mean(0)


#: The logit scales the site compares, as a function of d_k (order: none, 1/sqrt(d_k), 1/d_k).
SCALE_ARMS = {"none": lambda d_k: 1.0, "1/sqrt(d_k)": lambda d_k: d_k**-0.5, "1/d_k": lambda d_k: 1.0 / d_k}


def scale_arms(d_k: int, names=tuple(SCALE_ARMS), inits=("unit", "default")) -> tuple[Arm, ...]:
    """One fixed-scale arm per (init, scale name), labelled "init, name"."""
    return tuple(Arm(SCALE_ARMS[n](d_k), init=i, label=f"{i}, {n}") for i in inits for n in names)


@cache
def scale_ablation(
    d_ks: tuple[int, ...] = (16, 64, 256),
    optimizers: tuple[tuple[str, float], ...] = (("adam", 1e-2), ("sgd", 1.0)),
    seeds: tuple[int, ...] = (0, 1, 2),
    steps: int = 200,
    record_every: int = 5,
    n_pairs: int = 8,
    batch: int = 32,
    d_model: int = 32,
) -> dict[tuple[str, int], tuple[RecallConfig, dict]]:
    """The scaling ablation: arms none, 1/sqrt(d_k), 1/d_k x both inits, per optimiser and d_k.

    One batched :func:`run` per (optimiser, d_k) (head sizes cannot share a stack). The
    defaults are the failure-modes page's: small enough for a 2-core CPU build.
    Returns ``{(optimiser, d_k): (config, history)}``.
    """
    out = {}
    for opt, lr in optimizers:
        for d_k in d_ks:
            cfg = RecallConfig(
                d_k=d_k, steps=steps, lr=lr, optimizer=opt, seeds=seeds,
                arms=scale_arms(d_k), record_every=record_every,
                n_pairs=n_pairs, batch=batch, d_model=d_model,
            )
            out[(opt, d_k)] = (cfg, run(cfg))
    return out


def draw_ablation(axes, runs: dict, metric: str, ylabel: str, reference: tuple | None = None) -> None:
    """Plot ``metric`` of :func:`scale_ablation` runs on a grid (rows: optimisers, cols: d_k).

    Unit init: mean line and min-max band over seeds; default init: dashed mean.
    ``reference`` is an optional (y, label) dotted line, e.g. chance or ln n. One legend
    for the whole figure goes below the panels.
    """
    from sdpa.figures import INK, PALETTE

    colors = {"none": PALETTE[3], "1/sqrt(d_k)": PALETTE[0], "1/d_k": PALETTE[2]}
    optimisers = list(dict.fromkeys(opt for opt, _ in runs))
    head_dims = sorted({d_k for _, d_k in runs})
    for row, opt in zip(axes, optimisers):
        for ax, d_k in zip(row, head_dims):
            cfg, h = runs[(opt, d_k)]
            steps = h["step"].tolist()
            for a, arm in enumerate(cfg.arms):
                init, name = arm.label.split(", ")
                values = h[metric][:, a]
                if init == "unit":
                    ax.plot(steps, values.mean(1).tolist(), color=colors[name], label=f"{name}, unit init")
                    ax.fill_between(steps, values.amin(1).tolist(), values.amax(1).tolist(), color=colors[name], alpha=0.22, lw=0)
                else:
                    ax.plot(steps, values.mean(1).tolist(), "--", color=colors[name], lw=1, label=f"{name}, default init")
            if reference is not None:
                ax.axhline(reference[0], color=INK, ls=":", lw=1, label=reference[1])
            ax.set_title(f"{'Adam' if opt == 'adam' else 'SGD'}, lr {cfg.lr:g}, d_k = {d_k}")
            if opt == optimisers[-1]:
                ax.set_xlabel("step")
            if d_k == head_dims[0]:
                ax.set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][0].figure.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=7.5)
