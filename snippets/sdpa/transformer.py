"""A small nanoGPT-style causal transformer, trained as a batch of independent runs.

Every parameter carries a leading *member* axis: member ``m`` is one complete model with
its own initialisation seed and its own learning rate, and the forward pass is plain
``einsum`` over that axis. The loss of the batch is the sum of the members' losses, so
autograd gives each member exactly its own gradient, and the Adam update below is
elementwise with a per-member learning rate: a learning-rate sweep over several seeds
is one computation, and equals the same runs done one at a time.

The attention options the QK-norm page compares live in :class:`Config`:

* ``scale``: ``"sqrt"`` multiplies ``q . k`` by ``1/sqrt(d_head)``; ``"none"`` does not;
* ``qk_norm``: ``None``, ``"rms"`` or ``"layer"``: normalise each head's ``q`` and ``k``
  over the head dimension and multiply by a learnable gain (one per head dimension,
  shared by the heads of a layer, as in Qwen3 and Gemma 3); ``scale`` still applies;
* ``softcap``: ``c`` replaces each logit ``z`` by ``c * tanh(z / c)`` (Gemma 2, Grok-1).

While it trains, the model records the largest attention logit that reaches a softmax
(and the largest before the soft cap) and the mean attention entropy of every head.

The task is synthetic and generated here (:func:`copy_batch`): a run of random tokens
followed by the same run again. The second half is predictable only by attending back
to the right position (an induction head), so the loss measures whether attention works.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

import torch
import torch.nn.functional as F

from sdpa.attention import entropy
from sdpa import runtime
from sdpa.runtime import device as default_device


@dataclass(frozen=True)
class Config:
    """The model and its attention options (one frozen value: it keys the memo cache)."""

    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 32
    d_head: int = 16
    mlp_ratio: int = 2
    vocab: int = 8
    context: int = 16
    scale: str = "sqrt"  # "sqrt" | "none"
    qk_norm: str | None = None  # None | "rms" | "layer"
    softcap: float | None = None
    init_std: float = 0.02

    def logit_scale(self) -> float:
        return 1.0 / math.sqrt(self.d_head) if self.scale == "sqrt" else 1.0

    def shape(self) -> "Config":
        """The same model with default attention options: arms of one sweep share it."""
        return replace(self, scale="sqrt", qk_norm=None, softcap=None)


@dataclass(frozen=True)
class Sweep:
    """Arms times learning rates times seeds, all trained together as one computation."""

    arms: tuple[Config, ...] = (Config(),)
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
    seeds: tuple[int, ...] = (0, 1)
    steps: int = 120
    batch: int = 8
    betas: tuple[float, float] = (0.9, 0.95)
    eps: float = 1e-8
    data_seed: int = 1234


def copy_batch(n: int, cfg: Config, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of ``context`` tokens: ``context/2`` random tokens, then the same again.

    Returns inputs and next-token targets; targets in the first half (unpredictable) are
    set to -1 and left out of the loss.
    """
    half = cfg.context // 2
    first = torch.randint(0, cfg.vocab, (n, half), generator=generator)
    tokens = torch.cat([first, first, first[:, :1]], dim=1)  # one extra for the last target
    inputs, targets = tokens[:, :-1].clone(), tokens[:, 1:].clone()
    targets[:, : half - 1] = -1
    return inputs, targets


def init_params(cfg: Config, seeds: list[int]) -> dict[str, torch.Tensor]:
    """GPT-2-style initialisation, one member per entry of ``seeds`` (stacked on dim 0).

    Every member gets gains for QK-norm; a member that does not normalise never uses
    them, gets zero gradients, and Adam leaves them at one.
    """
    d, hd, h, f = cfg.d_model, cfg.d_head, cfg.n_heads, cfg.mlp_ratio * cfg.d_model
    shapes = {"tok": (cfg.vocab, d), "pos": (cfg.context, d), "unembed": (d, cfg.vocab)}
    for layer in range(cfg.n_layers):
        shapes |= {f"{layer}.qkv": (d, 3 * h * hd), f"{layer}.proj": (h * hd, d), f"{layer}.fc": (d, f), f"{layer}.out": (f, d)}
    members = []
    for s in seeds:
        g = runtime.generator(s)
        p = {}
        for name, shape in shapes.items():
            std = cfg.init_std / math.sqrt(2 * cfg.n_layers) if name.endswith(("proj", "out")) else cfg.init_std
            p[name] = torch.randn(shape, generator=g) * std
        members.append(p)
    params = {name: torch.stack([m[name] for m in members]) for name in shapes}
    ones = {f"{layer}.{n}": (d,) for layer in range(cfg.n_layers) for n in ("ln1", "ln2")} | {"ln_f": (d,)}
    ones |= {f"{layer}.{n}": (hd,) for layer in range(cfg.n_layers) for n in ("q_gain", "k_gain")}
    params |= {name: torch.ones(len(seeds), *shape) for name, shape in ones.items()}
    return params


def _per_member(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """View a (members,) or (members, d) tensor so it broadcasts against ``like``."""
    return values.view(values.shape[0], *([1] * (like.dim() - values.dim())), *values.shape[1:])


def norm(x: torch.Tensor, gain: torch.Tensor, kind: str) -> torch.Tensor:
    """LayerNorm (``"layer"``) or RMSNorm (``"rms"``) over the last dim, times a per-member gain."""
    if kind == "layer":
        x = x - x.mean(-1, keepdim=True)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    return x * _per_member(gain, x)


@dataclass(frozen=True)
class Options:
    """The arms' attention options as per-member tensors, so all arms train together."""

    scale: torch.Tensor  # (members,) the logit multiplier
    rms: torch.Tensor  # (members,) bool: RMS-normalise q and k
    layer: torch.Tensor  # (members,) bool: LayerNorm q and k
    cap: torch.Tensor  # (members,) soft cap, inf for none

    @staticmethod
    def of(configs: list[Config], device: torch.device | str = "cpu") -> "Options":
        return Options(
            scale=torch.tensor([c.logit_scale() for c in configs], device=device),
            rms=torch.tensor([c.qk_norm == "rms" for c in configs], device=device),
            layer=torch.tensor([c.qk_norm == "layer" for c in configs], device=device),
            cap=torch.tensor([c.softcap or math.inf for c in configs], device=device),
        )


def attention_logits(q: torch.Tensor, k: torch.Tensor, opts: Options, q_gain, k_gain):
    """Logits (members, batch, heads, queries, keys), before and after the soft cap.

    ``q`` and ``k`` are (members, batch, heads, tokens, d_head).
    """
    for kind, on in (("rms", opts.rms), ("layer", opts.layer)):
        if on.any():
            q = torch.where(_per_member(on, q), norm(q, q_gain, kind), q)
            k = torch.where(_per_member(on, k), norm(k, k_gain, kind), k)
    raw = torch.einsum("ebhqd,ebhkd->ebhqk", q, k) * _per_member(opts.scale, q)
    if torch.isfinite(opts.cap).any():
        cap = _per_member(opts.cap.clamp(max=1e30), raw)
        capped = torch.where(_per_member(torch.isfinite(opts.cap), raw), cap * torch.tanh(raw / cap), raw)
    else:
        capped = raw
    return raw, capped


def forward(params, inputs: torch.Tensor, cfg: Config, opts: Options):
    """Per-member logits over the vocabulary, plus attention statistics per layer.

    ``inputs`` is (members, batch, tokens). Returns the output logits and, per layer,
    a dict with the largest logit (after and before the cap, per member) and the mean
    entropy of each head (members, heads), all detached.
    """
    e, b, t = inputs.shape
    h, hd = cfg.n_heads, cfg.d_head
    x = params["tok"][torch.arange(e, device=inputs.device)[:, None, None], inputs] + params["pos"][:, None, :t]
    causal = torch.ones(t, t, dtype=torch.bool, device=inputs.device).tril()
    stats = []
    for layer in range(cfg.n_layers):
        y = norm(x, params[f"{layer}.ln1"], "layer")
        qkv = torch.einsum("ebtd,edf->ebtf", y, params[f"{layer}.qkv"]).view(e, b, t, 3, h, hd)
        q, k, v = (qkv[:, :, :, i].transpose(2, 3) for i in range(3))  # (e, b, h, t, hd)
        raw, z = attention_logits(q, k, opts, params[f"{layer}.q_gain"], params[f"{layer}.k_gain"])
        z = z.masked_fill(~causal, float("-inf"))
        p = torch.softmax(z, dim=-1)
        with torch.no_grad():
            stats.append(
                {
                    "max_logit": z.amax(dim=(1, 2, 3, 4)),
                    "max_raw": raw.masked_fill(~causal, float("-inf")).amax(dim=(1, 2, 3, 4)),
                    "entropy": entropy(p[..., 1:, :]).mean(dim=(1, 3)),  # row 0 sees one key
                }
            )
        att = torch.einsum("ebhqk,ebhkd->ebqhd", p, v).reshape(e, b, t, h * hd)
        x = x + torch.einsum("ebtf,efd->ebtd", att, params[f"{layer}.proj"])
        y = norm(x, params[f"{layer}.ln2"], "layer")
        y = F.gelu(torch.einsum("ebtd,edf->ebtf", y, params[f"{layer}.fc"]))
        x = x + torch.einsum("ebtf,efd->ebtd", y, params[f"{layer}.out"])
    x = norm(x, params["ln_f"], "layer")
    return torch.einsum("ebtd,edv->ebtv", x, params["unembed"]), stats


def member_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of each member over the predictable targets (members,)."""
    e = logits.shape[0]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1, reduction="none")
    mask = (targets >= 0).reshape(e, -1).float()
    return (ce.view(e, -1) * mask).sum(1) / mask.sum(1)


def qk_norm_bound(params, cfg: Config, opts: Options) -> torch.Tensor:
    """The largest logit QK-norm (RMS) allows, per member: scale * d_head * max|g_q| * max|g_k|.

    Cauchy-Schwarz on the normalised vectors, whose norm is at most sqrt(d_head) * max|g|;
    the largest over the layers. Meaningless for members without QK-norm.
    """
    per_layer = [
        params[f"{layer}.q_gain"].abs().amax(-1) * params[f"{layer}.k_gain"].abs().amax(-1)
        for layer in range(cfg.n_layers)
    ]
    return torch.stack(per_layer).amax(0) * cfg.d_head * opts.scale


def adam_step(params, grads, state, lr: torch.Tensor, step: int, betas, eps) -> None:
    """Adam without weight decay, in place, with one learning rate per member."""
    b1, b2 = betas
    for name, p in params.items():
        m, v = state[name]
        m.mul_(b1).add_(grads[name], alpha=1 - b1)
        v.mul_(b2).addcmul_(grads[name], grads[name], value=1 - b2)
        denom = (v / (1 - b2**step)).sqrt_().add_(eps)
        p.sub_(_per_member(lr / (1 - b1**step), p) * m / denom)


@dataclass
class History:
    """What one sweep recorded. The last axes of every array are (arms, lrs, seeds)."""

    sweep: Sweep
    loss: torch.Tensor  # (steps, arms, lrs, seeds): training loss before each update
    max_logit: torch.Tensor  # (steps, arms, lrs, seeds): largest logit a softmax saw
    max_raw: torch.Tensor  # (steps, arms, lrs, seeds): the same before the soft cap
    bound: torch.Tensor  # (steps, arms, lrs, seeds): the QK-norm bound (QK-norm arms only)
    entropy: torch.Tensor  # (steps, layers, heads, arms, lrs, seeds): mean row entropy, nats
    final_loss: torch.Tensor  # (arms, lrs, seeds): on a fixed held-out batch after training
    initial_loss: torch.Tensor  # (arms, lrs, seeds): the same batch before training

    def arm(self, config: Config) -> int:
        return self.sweep.arms.index(config)


@cache
def train_sweep(sweep: Sweep) -> History:
    """Train every (arm, learning rate, seed) member of ``sweep`` at once; memoised.

    Members that share a seed share their initialisation and their data, so the arm and
    the learning rate are the only differences. The learning rate follows a cosine decay
    to zero with no warm-up.
    """
    return _train(sweep)


def _train(sweep: Sweep) -> History:
    cfg = sweep.arms[0].shape()
    if any(a.shape() != cfg for a in sweep.arms):
        raise ValueError("the arms of one sweep must differ only in their attention options")
    grid = [(a, lr, s) for a in sweep.arms for lr in sweep.lrs for s in sweep.seeds]
    n_seeds, shape = len(sweep.seeds), (len(sweep.arms), len(sweep.lrs), len(sweep.seeds))
    dev = default_device()
    opts = Options.of([a for a, _, _ in grid], dev)
    lr = torch.tensor([lr for _, lr, _ in grid], device=dev)
    params = {n: p.to(dev) for n, p in init_params(cfg, [s for _, _, s in grid]).items()}
    for p in params.values():
        p.requires_grad_(True)
    state = {name: (torch.zeros_like(p), torch.zeros_like(p)) for name, p in params.items()}
    generator = runtime.generator(sweep.data_seed)
    held_out = [x.to(dev) for x in copy_batch(128, cfg, runtime.generator(sweep.data_seed + 1))]
    initial = evaluate(params, held_out, cfg, opts)
    pick = torch.arange(len(grid)) % n_seeds  # the seed index of each member
    record = {"loss": [], "max_logit": [], "max_raw": [], "entropy": [], "bound": []}
    for step in range(1, sweep.steps + 1):
        inputs, targets = copy_batch(n_seeds * sweep.batch, cfg, generator)  # one batch per seed
        inputs = inputs.view(n_seeds, sweep.batch, -1)[pick].to(dev)
        targets = targets.view(n_seeds, sweep.batch, -1)[pick].to(dev)
        with torch.no_grad():
            record["bound"].append(qk_norm_bound(params, cfg, opts))
        logits, stats = forward(params, inputs, cfg, opts)
        losses = member_losses(logits, targets)
        grads = torch.autograd.grad(losses.sum(), list(params.values()))
        with torch.no_grad():
            decay = 0.5 * (1 + math.cos(math.pi * (step - 1) / sweep.steps))
            adam_step(params, dict(zip(params, grads)), state, lr * decay, step, sweep.betas, sweep.eps)
        record["loss"].append(losses.detach())
        record["max_logit"].append(torch.stack([s["max_logit"] for s in stats]).amax(0))
        record["max_raw"].append(torch.stack([s["max_raw"] for s in stats]).amax(0))
        record["entropy"].append(torch.stack([s["entropy"] for s in stats]).movedim(1, -1))
    final = evaluate(params, held_out, cfg, opts)
    record = {k: [x.detach().cpu() for x in v] for k, v in record.items()}
    final, initial = final.cpu(), initial.cpu()
    return History(
        sweep=sweep,
        loss=torch.stack(record["loss"]).view(-1, *shape),
        max_logit=torch.stack(record["max_logit"]).view(-1, *shape),
        max_raw=torch.stack(record["max_raw"]).view(-1, *shape),
        bound=torch.stack(record["bound"]).view(-1, *shape),
        entropy=torch.stack(record["entropy"]).view(sweep.steps, cfg.n_layers, cfg.n_heads, *shape),
        final_loss=final.view(shape),
        initial_loss=initial.view(shape),
    )


@torch.no_grad()
def evaluate(params, batch, cfg: Config, opts: Options) -> torch.Tensor:
    """Each member's loss on one shared batch; a diverged member (NaN) counts as ln(vocab) x 10."""
    inputs, targets = batch
    e = opts.scale.shape[0]
    expand = lambda x: x[None].expand(e, *x.shape)  # noqa: E731
    logits, _ = forward({n: p.detach() for n, p in params.items()}, expand(inputs), cfg, opts)
    return torch.nan_to_num(member_losses(logits, expand(targets)), nan=10 * math.log(cfg.vocab))


def lr_sensitivity(final_loss: torch.Tensor, initial_loss: float) -> float:
    """LR sensitivity (Wortsman et al. 2023): the mean over learning rates of min(L(lr), L0) - L*.

    ``final_loss`` holds one final loss per learning rate (averaged over seeds),
    ``initial_loss`` is the loss at initialisation L0 and L* is the best final loss of
    the sweep. Zero means every learning rate did as well as the best one.
    """
    return (final_loss.clamp(max=initial_loss) - final_loss.min()).mean().item()


#: The arms the QK-norm page compares, by name.
ARMS: dict[str, Config] = {
    "1/√d_k": Config(),
    "no scale": Config(scale="none"),
    "QK-norm + 1/√d_k": Config(qk_norm="rms"),
    "QK-norm, no scale": Config(qk_norm="rms", scale="none"),
    "soft-cap + 1/√d_k": Config(softcap=10.0),
}

#: The page's sweep: every arm, five learning rates, two seeds, as one computation.
PAGE_SWEEP = Sweep(arms=tuple(ARMS.values()))
