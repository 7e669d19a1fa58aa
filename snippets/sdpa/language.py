"""The language-model study: a small GPT on real text, every scale rule a point of one plane.

The model is the site's :class:`sdpa.models.GPT` (nanoGPT's shape: pre-LayerNorm blocks,
GPT-2 initialisation, Adam, a cosine schedule) reading CPython's help topics character by
character (:func:`sdpa.tasks.text_corpus`). As on the recall task (:mod:`sdpa.plane`), an
unscaled head whose W_Q and W_K start ``a`` times GPT-2's draw and learn at ``r`` times the
shared rate is, under Adam, the head with factor c at (a / sqrt(c), r / sqrt(c)): so the
plane of the unscaled model's (a, r) = (d_k^(-u/4), d_k^(-v/4)) holds no factor at (0, 0),
1/sqrt(d_k) at (1, 1) and 1/d_k at (2, 2), and its rows with u < 0 start wider than GPT-2
does at this width: as wide as GPT-2 small's or a 7B model's heads start (d_k is the
model's ``d_head``).

The study, in three stages, each split into even parts (a seed, at most ten members)
that the build's workers share (:func:`sdpa.gpt.run_gpt_in_parts`):

1. **the shared rate**, tuned once: the unscaled and the 1/sqrt(d_k) defaults at every
   rate of ``lrs`` on the choice seeds; the rate with the lowest mean final held-out loss
   over both (in logs) serves every later run;
2. **the plane**: every (u, v) of ``u_steps`` x ``v_steps`` at that rate, on the choice seeds;
3. **the confirmation**, on fresh seeds: every rule's default (QK-norm + 1/sqrt(d_k)
   too), the plane's best point, each row's best point (a row is one starting spread), and
   the named starting spreads of ``spreads`` without and with the factor.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from sdpa.attention import Scale
from sdpa.gpt import GPTHistory, GPTRecords, GPTSweep, run_gpt_in_parts
from sdpa.models import GPTConfig
from sdpa.runtime import memo, profile
from sdpa.tasks import text_corpus


def logit_spread(d_model: int, d_head: int, weight_std: float = 0.02) -> float:
    """The std of an unscaled logit q . k at initialisation, with every weight drawn with
    standard deviation ``weight_std`` and LayerNorm'd (unit-variance) inputs: a q or k
    component has variance d_model weight_std^2, and q . k sums d_head products of two."""
    return math.sqrt(d_head) * d_model * weight_std**2


@dataclass(frozen=True)
class LanguageStudy:
    """The model, the plane, the rates, the seeds and the budget."""

    model: GPTConfig
    steps: int
    batch: int  # sequences per step and seed
    evals: int  # held-out loss measured every steps/evals steps
    held_out: int  # sequences of the fixed held-out batch
    lrs: tuple[float, ...]  # the shared rates of stage 1
    u_steps: tuple[int, ...]  # the plane's rows: W_Q, W_K start d_k^(-u/4) x GPT-2's draw
    v_steps: tuple[int, ...]  # its columns: they learn at d_k^(-v/4) x the shared rate
    choose_seeds: tuple[int, ...]
    confirm_seeds: tuple[int, ...]
    #: (name, d_model, d_head): other models' GPT-2 starting spreads, reached here by a
    spreads: tuple[tuple[str, int, int], ...] = ()

    def multiplier(self, steps: float) -> float:
        return self.model.d_head ** (-steps / 4)

    def point(self, i: float, j: float, scale: Scale = Scale.NONE) -> GPTConfig:
        """The model at plane point (u, v) with the logit factor ``scale``."""
        return dataclasses.replace(self.model, scale=scale, qk_init=self.multiplier(i),
                                   qk_lr=self.multiplier(j))

    @property
    def defaults(self) -> dict[str, GPTConfig]:
        """Every rule at its default (GPT-2's initialisation, the shared rate)."""
        m = self.model
        return {"none": dataclasses.replace(m, scale=Scale.NONE),
                "inv_sqrt": dataclasses.replace(m, scale=Scale.INV_SQRT),
                "inv": dataclasses.replace(m, scale=Scale.INV),
                "qk_norm": dataclasses.replace(m, scale=Scale.INV_SQRT, qk_norm="rms")}

    @property
    def points(self) -> tuple[tuple[int, int], ...]:
        return tuple((u, v) for u in self.u_steps for v in self.v_steps)

    def spread_steps(self, d_model: int, d_head: int) -> float:
        """The row u (a real number) at which this model's unscaled heads start as wide as
        GPT-2's initialisation makes them at ``d_model`` and ``d_head``."""
        here = logit_spread(self.model.d_model, self.model.d_head, self.model.init_std)
        m = math.sqrt(logit_spread(d_model, d_head, self.model.init_std) / here)
        return -4 * math.log(m) / math.log(self.model.d_head)

    def sweep(self, arms: tuple[GPTConfig, ...], lrs: tuple[float, ...],
              seeds: tuple[int, ...]) -> GPTSweep:
        return GPTSweep(arms=arms, lrs=lrs, seeds=seeds, steps=self.steps, batch=self.batch,
                        held_out=self.held_out, task="text", evals=self.evals)


def _model(d_model: int, n_heads: int, d_head: int, context: int, mlp_ratio: int) -> GPTConfig:
    return GPTConfig(n_layers=2, n_heads=n_heads, d_model=d_model, d_head=d_head,
                     mlp_ratio=mlp_ratio, vocab=text_corpus().vocab, context=context)


#: The two sizes: ``quick`` fits the CPU build (a 2 x 2 corner of the plane, seconds);
#: ``full`` has heads of 64 and about two passes over the text; its MLP is twice as wide as
#: the model (nanoGPT's is four times), which takes a quarter off each of its 144 runs, so
#: that the full build keeps its hour on the 2-core machine.
SIZES: dict[str, LanguageStudy] = {
    "quick": LanguageStudy(
        model=_model(32, 2, 16, 32, mlp_ratio=4), steps=150, batch=4, evals=6, held_out=32,
        lrs=(10**-2.5, 10**-2, 10**-1.5), u_steps=(0, 1), v_steps=(0, 1),
        choose_seeds=(0,), confirm_seeds=(1, 2),
        spreads=(("a 7B model", 4096, 128),)),  # one, so that the quick build runs the names
    "full": LanguageStudy(
        model=_model(128, 2, 64, 64, mlp_ratio=2), steps=750, batch=16, evals=15, held_out=64,
        lrs=(10**-3.5, 10**-3, 10**-2.5, 10**-2), u_steps=(-2, -1, 0, 1, 2), v_steps=(-1, 0, 1, 2),
        choose_seeds=(0, 1, 2), confirm_seeds=(3, 4, 5, 6, 7),
        spreads=(("GPT-2 small", 768, 64), ("a 7B model", 4096, 128))),
}


def language_study() -> LanguageStudy:
    """The study at the size of the current profile (:func:`sdpa.runtime.profile`)."""
    return SIZES[profile()]


def _log_final(history: GPTHistory, config: GPTConfig, lr: float) -> torch.Tensor:
    return history.arm(config, lr).final_loss.log()


@dataclass(frozen=True)
class LanguageResult:
    """The study's three stages. Losses are final held-out losses (nats)."""

    study: LanguageStudy
    lr: float  # the shared rate stage 1 chose
    rate_loss: torch.Tensor  # (2, lrs) mean log final loss: unscaled, 1/sqrt(d_head) defaults
    plane_loss: torch.Tensor  # (points, choose seeds) final loss at every plane point
    best: tuple[int, int]  # the plane's best point on the choice seeds
    row_best: dict[int, tuple[int, int]]  # each row's best point
    confirmed: dict[str, GPTConfig]  # the confirmed settings, by name
    records: dict[str, GPTRecords]  # their records on the confirm seeds (trailing axis: seeds)

    def final(self, name: str) -> torch.Tensor:
        """(confirm seeds,) a confirmed setting's final held-out loss."""
        return self.records[name].final_loss


def spread_settings(name: str) -> tuple[str, str]:
    """The names under which a named spread's two confirmed settings are kept: the model
    without the factor, and the 1/sqrt(d_k) model from the same weights."""
    return f"{name}, no factor", f"{name}, 1/√d_k"


@memo
def run_language(study: LanguageStudy | None = None) -> LanguageResult:
    """The three stages of the study (the current profile's by default)."""
    study = study or language_study()
    d = study.defaults
    rate = run_gpt_in_parts(study.sweep((d["none"], d["inv_sqrt"]), study.lrs, study.choose_seeds))
    rate_loss = torch.stack([torch.stack([_log_final(rate, c, lr).mean() for lr in study.lrs])
                             for c in (d["none"], d["inv_sqrt"])])
    lr = study.lrs[int(rate_loss.mean(0).argmin())]
    grid = tuple(study.point(i, j) for i, j in study.points)
    plane = run_gpt_in_parts(study.sweep(grid, (lr,), study.choose_seeds))
    plane_loss = torch.stack([plane.arm(c, lr).final_loss for c in grid])
    mean_log = plane_loss.log().mean(-1)
    best = study.points[int(mean_log.argmin())]
    row_best = {}
    for i in study.u_steps:
        row = [k for k, (a, _) in enumerate(study.points) if a == i]
        row_best[i] = study.points[min(row, key=lambda k: mean_log[k].item())]
    confirmed = dict(d)
    confirmed["best"] = study.point(*best)
    for i, point in row_best.items():
        confirmed[f"row {i}"] = study.point(*point)
    for name, d_model, d_head in study.spreads:
        i = study.spread_steps(d_model, d_head)
        without, scaled = spread_settings(name)
        confirmed[without] = study.point(i, 0)
        # the same weights with the factor: the 1/sqrt(d_k) head at a = d_k^(-u/4)
        confirmed[scaled] = study.point(i, 0, Scale.INV_SQRT)
    arms = tuple(dict.fromkeys(confirmed.values()))
    confirm = run_gpt_in_parts(study.sweep(arms, (lr,), study.confirm_seeds))
    return LanguageResult(
        study=study, lr=lr, rate_loss=rate_loss, plane_loss=plane_loss, best=best,
        row_best=row_best, confirmed=confirmed,
        records={name: confirm.arm(c, lr) for name, c in confirmed.items()})


RULE_LABELS = {"none": "no factor", "inv_sqrt": "1/√d_k", "inv": "1/d_k",
               "qk_norm": "QK-norm + 1/√d_k", "best": "the plane's best point"}


def mean_se(values: torch.Tensor) -> tuple[float, float]:
    """The mean over seeds (the last axis) and its standard error."""
    n = values.shape[-1]
    return values.mean(-1).item(), (values.std(-1) / n**0.5).item() if n > 1 else float("nan")
