"""The language-model study: a small GPT on real text, every scale rule tuned on its own.

The model is the site's :class:`sdpa.models.GPT` (nanoGPT's shape: pre-LayerNorm blocks,
GPT-2 initialisation, Adam, a cosine schedule) reading CPython's help topics character by
character (:func:`sdpa.tasks.text_corpus`). Four rules for the logits: no factor,
1/sqrt(d_head), 1/d_head, and QK-norm (RMSNorm of q and k with learned gains) with
1/sqrt(d_head). The unscaled rule gets the freedom the argument says it needs: under Adam
an unscaled head whose W_Q and W_K learn d_head^(-1/4) times slower (and start
d_head^(-1/4) smaller) is the 1/sqrt(d_head) head, so it also sweeps W_Q and W_K's own rate
(``qk_lrs``, :attr:`sdpa.models.GPTConfig.qk_lr`), separately from every other weight's.

Tuning, in one run: every candidate trains at every rate of the window on every seed;
the ``choose_seeds`` pick each rule's best (candidate, rate) by their mean final held-out
loss, and the ``confirm_seeds``, which the choice never saw, report it, beside the same
seeds at the fixed rate ``fixed_lr`` (every rule's plain form, W_Q and W_K at the shared
rate). The sizes of both profiles are :data:`SIZES`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from sdpa.attention import Scale
from sdpa.gpt import GPTHistory, GPTSweep, run_gpt
from sdpa.models import GPTConfig
from sdpa.runtime import memo, profile
from sdpa.tasks import text_corpus


@dataclass(frozen=True)
class LanguageStudy:
    """The model, the rules' candidates, the rate window, the seeds and the budget."""

    model: GPTConfig
    steps: int
    batch: int  # sequences per step and seed
    evals: int  # held-out loss measured every steps/evals steps
    held_out: int  # sequences of the fixed held-out batch
    lrs: tuple[float, ...]  # the window every candidate sweeps
    qk_lrs: tuple[float, ...]  # W_Q and W_K's rate multipliers the unscaled rule tries
    fixed_lr: float  # one of ``lrs``: the untuned comparison
    choose_seeds: tuple[int, ...]
    confirm_seeds: tuple[int, ...]
    early: int  # the early budget (steps) at which a speed verdict reads the held-out loss

    @property
    def rules(self) -> dict[str, tuple[GPTConfig, ...]]:
        """Each rule's candidates; the first is its plain form."""
        m = self.model
        return {
            "none": tuple(dataclasses.replace(m, scale=Scale.NONE, qk_lr=r) for r in self.qk_lrs),
            "inv_sqrt": (dataclasses.replace(m, scale=Scale.INV_SQRT),),
            "inv": (dataclasses.replace(m, scale=Scale.INV),),
            "qk_norm": (dataclasses.replace(m, scale=Scale.INV_SQRT, qk_norm="rms"),),
        }

    def sweep(self) -> GPTSweep:
        """Every candidate x rate x seed, as one sweep."""
        arms = tuple(c for candidates in self.rules.values() for c in candidates)
        return GPTSweep(arms=arms, lrs=self.lrs, seeds=self.choose_seeds + self.confirm_seeds,
                        steps=self.steps, batch=self.batch, held_out=self.held_out,
                        task="text", evals=self.evals)


def _model(d_model: int, n_heads: int, d_head: int, context: int) -> GPTConfig:
    return GPTConfig(n_layers=2, n_heads=n_heads, d_model=d_model, d_head=d_head,
                     mlp_ratio=4, vocab=text_corpus().vocab, context=context)


#: The two sizes: ``quick`` fits the CPU build (about 10 s); ``full`` has heads of 64
#: (about 40 min of one CPU core, minutes on a GPU).
SIZES: dict[str, LanguageStudy] = {
    "quick": LanguageStudy(
        model=_model(32, 2, 16, 32), steps=150, batch=4, evals=6, held_out=32,
        lrs=(10**-2.5, 10**-2, 10**-1.5), qk_lrs=(1.0, 16**-0.25), fixed_lr=10**-2.5,
        choose_seeds=(0,), confirm_seeds=(1, 2), early=50),
    "full": LanguageStudy(
        model=_model(128, 2, 64, 64), steps=800, batch=8, evals=16, held_out=64,
        lrs=(10**-4, 10**-3.5, 10**-3, 10**-2.5), qk_lrs=(1.0, 64**-0.25),
        fixed_lr=10**-3, choose_seeds=(0, 1), confirm_seeds=(2, 3, 4), early=200),
}


def language_study() -> LanguageStudy:
    """The study at the size of the current profile (:func:`sdpa.runtime.profile`)."""
    return SIZES[profile()]


@dataclass(frozen=True)
class TunedRule:
    """One rule after tuning: its best candidate and rate, and what the confirmation seeds
    measured there and at the fixed rate. Curves have trailing axis (confirm seeds,)."""

    name: str
    label: str
    config: GPTConfig  # the chosen candidate
    lr: float  # the chosen rate
    choose_loss: torch.Tensor  # (candidates, lrs) mean final held-out loss, choose seeds
    window_loss: torch.Tensor  # (lrs, confirm seeds) the chosen candidate at every rate
    final: torch.Tensor  # (confirm seeds,) final held-out loss at the chosen setting
    fixed: torch.Tensor  # (confirm seeds,) the plain form at the fixed rate
    held_out: torch.Tensor  # (evals + 1, confirm seeds) held-out loss over training
    entropy: torch.Tensor  # (steps, confirm seeds) mean attention entropy (layers, heads)
    max_logit: torch.Tensor  # (steps, confirm seeds) largest logit any softmax saw
    grad_ratio: torch.Tensor  # (steps, confirm seeds) |grad W_Q| / |grad W_V|, layer mean


RULE_LABELS = {"none": "no factor", "inv_sqrt": "1/√d_head", "inv": "1/d_head",
               "qk_norm": "QK-norm + 1/√d_head"}


def _tuned(study: LanguageStudy, history: GPTHistory, name: str,
           candidates: tuple[GPTConfig, ...]) -> TunedRule:
    n = len(study.choose_seeds)
    losses = torch.stack([history.arm(c).final_loss for c in candidates])  # (cand, lrs, seeds)
    choose = losses[..., :n].mean(-1)
    c, i = divmod(int(choose.argmin()), len(study.lrs))
    config, lr = candidates[c], study.lrs[i]
    at = history.arm(config, lr).map(lambda t: t[..., n:])
    # the trained W_Q is W / qk_lr, so its gradient is qk_lr times W's: report W's
    ratio = at.grad_ratio.mean(1) / config.qk_lr
    return TunedRule(
        name=name, label=RULE_LABELS[name], config=config, lr=lr, choose_loss=choose,
        window_loss=losses[c, :, n:], final=at.final_loss,
        fixed=history.arm(candidates[0], study.fixed_lr).final_loss[n:],
        held_out=at.held_out_loss, entropy=at.entropy.mean((1, 2)),
        max_logit=at.max_logit, grad_ratio=ratio)


@memo
def run_language(study: LanguageStudy | None = None) -> dict[str, TunedRule]:
    """Train the study's sweep (the current profile's by default) and tune every rule."""
    study = study or language_study()
    history = run_gpt(study.sweep())
    return {name: _tuned(study, history, name, cands) for name, cands in study.rules.items()}


def mean_se(values: torch.Tensor) -> tuple[float, float]:
    """The mean over seeds (the last axis) and its standard error."""
    n = values.shape[-1]
    return values.mean(-1).item(), (values.std(-1) / n**0.5).item() if n > 1 else float("nan")


def steps_to(held_out: torch.Tensor, eval_steps: tuple[int, ...], threshold: float) -> float:
    """The first step at which the held-out curve (evals + 1,) reaches ``threshold``,
    interpolated linearly between measurements; inf if it never does."""
    curve = held_out.tolist()
    for i in range(1, len(curve)):
        if curve[i] <= threshold:
            a, b = curve[i - 1], curve[i]
            t = 0.0 if a == b else (a - threshold) / (a - b)
            return eval_steps[i - 1] + t * (eval_steps[i] - eval_steps[i - 1])
    return float("inf")


@dataclass(frozen=True)
class Verdicts:
    """What the study's table says, per rule: speed (the held-out loss at the early budget,
    the steps to ``threshold``) and the loss at the end of the budget, means and standard
    errors over the confirmation seeds, and each rule against 1/sqrt(d_head), paired by seed."""

    threshold: float  # the loss every rule's mean curve reaches: the worst final mean + 0.05
    early: dict[str, tuple[float, float]]
    steps: dict[str, float]  # steps of the mean curve to the threshold
    final: dict[str, tuple[float, float]]
    fixed: dict[str, tuple[float, float]]
    versus: dict[str, tuple[float, float]]  # final - 1/sqrt's, paired by seed: mean, SE


def verdicts(study: LanguageStudy, tuned: dict[str, TunedRule]) -> Verdicts:
    """The numbers the page's verdicts are read from."""
    e = study.sweep().eval_steps.index(study.early)
    threshold = max(r.final.mean().item() for r in tuned.values()) + 0.05
    base = tuned["inv_sqrt"].final
    return Verdicts(
        threshold=threshold,
        early={k: mean_se(r.held_out[e]) for k, r in tuned.items()},
        steps={k: steps_to(r.held_out.mean(-1), study.sweep().eval_steps, threshold)
               for k, r in tuned.items()},
        final={k: mean_se(r.final) for k, r in tuned.items()},
        fixed={k: mean_se(r.fixed) for k, r in tuned.items()},
        versus={k: mean_se(r.final - base) for k, r in tuned.items()},
    )
