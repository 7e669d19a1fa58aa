"""The language-model study: a small GPT on real text, every scale rule a point of one plane.

The model is the site's :class:`sdpa.models.GPT` (nanoGPT's shape: pre-LayerNorm blocks,
GPT-2 initialisation, Adam, a cosine schedule) reading CPython's help topics character by
character (:func:`sdpa.tasks.text_corpus`). As on the recall task (:mod:`sdpa.plane`), an
unscaled head whose W_Q and W_K start ``a`` times GPT-2's draw and learn at ``r`` times the
shared rate is, under Adam, the head with factor c at (a / sqrt(c), r / sqrt(c)): so the
plane of the unscaled model's (a, r) = (d_k^(-u/4), d_k^(-w/4)) holds no factor at (0, 0),
1/sqrt(d_k) at (1, 1) and 1/d_k at (2, 2), and its rows with u < 0 start wider than GPT-2
does at this width (d_k is the model's ``d_head``). A row is one starting spread; the point
(u, u) of each row is the rule whose default starts there.

The study, in three stages, each split into even parts (a seed, at most ten members)
that the build's workers share (:meth:`sdpa.gpt.GPTSweep.parts`):

1. **the shared rate**, tuned once: the unscaled and the 1/sqrt(d_k) defaults at every
   rate of the window on the choice seeds; the rate with the lowest mean log final loss
   over both serves every later run. While the best rate lies on an edge of the window,
   the window widens by half a decade on that side (up to ``rate_reach``);
2. **the plane**: each row u at the shared rate, at w = u + each of ``w_offsets`` on the
   choice seeds; while a row's best w lies on an edge of its window, the window widens by
   one step on that side (up to ``w_reach`` steps from u). The shared rate is not tuned
   again per row;
3. **the confirmation**, on fresh seeds: every rule's default (QK-norm + 1/sqrt(d_k) too),
   the plane's best point and each row's best point.

The verdict compares, at each row's starting spread, the model without the factor (row u)
and the 1/sqrt(d_k) model from the same weights (row u + 1, by the identity), each at its
best w: paired by seed, with t intervals at a level corrected for the number of spreads
compared (Bonferroni), so that all of them hold together at ``confidence``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from sdpa.attention import Scale
from sdpa.gpt import GPTHistory, GPTRecords, GPTSweep, run_gpt
from sdpa.models import GPTConfig
from sdpa.runtime import each, memo, profile
from sdpa.stats import Interval, paired
from sdpa.tasks import text_corpus


def logit_spread(d_model: int, d_head: int, weight_std: float = 0.02) -> float:
    """The std of an unscaled logit q . k at initialisation, with every weight drawn with
    standard deviation ``weight_std`` and LayerNorm'd (unit-variance) inputs: a q or k
    component has variance d_model weight_std^2, and q . k sums d_head products of two."""
    return math.sqrt(d_head) * d_model * weight_std**2


#: Other models' heads, for reference on the starting-spread axis (d_model, d_head): the
#: spread GPT-2's initialisation gives them, :func:`logit_spread`. Not trained here.
NAMED_MODELS: tuple[tuple[str, int, int], ...] = (("GPT-2 small", 768, 64),
                                                  ("a 7B model", 4096, 128))


@dataclass(frozen=True)
class LanguageStudy:
    """The model, the windows, the seeds and the budget."""

    model: GPTConfig
    steps: int
    batch: int  # sequences per step and seed
    evals: int  # held-out loss measured every steps/evals steps
    held_out: int  # sequences of the fixed held-out batch
    rate_steps: tuple[float, ...]  # stage 1's first window: shared rates 10^e
    rate_reach: tuple[float, float]  # how far (10^e) that window may widen
    u_steps: tuple[int, ...]  # the plane's rows: W_Q, W_K start d_k^(-u/4) x GPT-2's draw
    w_offsets: tuple[int, ...]  # a row's first window: they learn at d_k^(-w/4) x the rate,
    w_reach: int  # w = u + offset; the window may widen up to |w - u| <= w_reach
    choose_seeds: tuple[int, ...]
    confirm_seeds: tuple[int, ...]
    confidence: float = 0.95  # the level at which the verdict's intervals hold together
    #: (name, d_model, d_head): other models' spreads confirmed at the default rate (none)
    spreads: tuple[tuple[str, int, int], ...] = ()

    @property
    def lrs(self) -> tuple[float, ...]:
        """The first window's shared rates."""
        return tuple(10**e for e in self.rate_steps)

    def multiplier(self, steps: float) -> float:
        return self.model.d_head ** (-steps / 4)

    def point(self, u: float, w: float, scale: Scale = Scale.NONE) -> GPTConfig:
        """The model at plane point (u, w) with the logit factor ``scale``. Without a factor,
        a rule's own point (u = w = 0, 1, 2 under Adam) is that rule's default: by the
        identity the same model, and as the rule Adam's epsilon for W_Q and W_K is the
        rule's own, so a rule is never compared with itself up to epsilon."""
        if scale is Scale.NONE and u == w and u in RULE_POINTS:
            return self.defaults[RULE_POINTS[u]]
        return dataclasses.replace(self.model, scale=scale, qk_init=self.multiplier(u),
                                   qk_lr=self.multiplier(w))

    @property
    def defaults(self) -> dict[str, GPTConfig]:
        """Every rule at its default (GPT-2's initialisation, the shared rate)."""
        m = self.model
        return {"none": dataclasses.replace(m, scale=Scale.NONE),
                "inv_sqrt": dataclasses.replace(m, scale=Scale.INV_SQRT),
                "inv": dataclasses.replace(m, scale=Scale.INV),
                "qk_norm": dataclasses.replace(m, scale=Scale.INV_SQRT, qk_norm="rms")}

    def spread(self, u: float) -> float:
        """The std of the unscaled logits at initialisation in row u."""
        m = self.model
        return logit_spread(m.d_model, m.d_head, m.init_std) * self.multiplier(u) ** 2

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


#: The two sizes: ``quick`` fits the CPU build (two rows of two points, one seed to choose,
#: seconds); ``full`` has heads of 64 and about two passes over the text, five rows
#: from a 7B model's spread to 1/d_k's, windows that widen until each best lies inside, and
#: eight fresh seeds; its MLP is twice as wide as the model (nanoGPT's is four times),
#: which takes a quarter off each run, so that the full build keeps its hour.
SIZES: dict[str, LanguageStudy] = {
    "quick": LanguageStudy(
        model=_model(32, 2, 16, 32, mlp_ratio=4), steps=150, batch=4, evals=6, held_out=32,
        rate_steps=(-2.5, -2, -1.5), rate_reach=(-2.5, -1.5), u_steps=(0, 1),
        w_offsets=(0, 1), w_reach=1, choose_seeds=(0,), confirm_seeds=(1, 2)),
    "full": LanguageStudy(
        model=_model(128, 2, 64, 64, mlp_ratio=2), steps=750, batch=16, evals=15, held_out=64,
        rate_steps=(-3.5, -3, -2.5), rate_reach=(-4.5, -1.5), u_steps=(-2, -1, 0, 1, 2),
        w_offsets=(-1, 0, 1), w_reach=5, choose_seeds=(0, 1, 2),
        confirm_seeds=(3, 4, 5, 6, 7, 8, 9, 10)),
}


def language_study() -> LanguageStudy:
    """The study at the size of the current profile (:func:`sdpa.runtime.profile`)."""
    return SIZES[profile()]


#: Under Adam each rule's default is the unscaled model at (u, u): its u, by rule name.
RULE_POINTS = {0: "none", 1: "inv_sqrt", 2: "inv"}


def spread_settings(name: str) -> tuple[str, str]:
    """The names under which a named spread's two confirmed settings are kept: the model
    without the factor, and the 1/sqrt(d_k) model from the same weights."""
    return f"{name}, no factor", f"{name}, 1/√d_k"


def widened(losses: dict[float, float], step: float,
            reach: tuple[float, float]) -> float | None:
    """The next point to measure beyond a window of ``losses`` (point -> loss): one ``step``
    past the edge where the best lies, while that stays within ``reach``; None when the
    best lies inside (or at the reach)."""
    window = sorted(losses)
    best = min(window, key=losses.__getitem__)
    if best == window[0] and best - step >= reach[0]:
        return best - step
    if best == window[-1] and best + step <= reach[1]:
        return best + step
    return None


@dataclass(frozen=True)
class LanguageResult:
    """The study's three stages. Losses are final held-out losses (nats)."""

    study: LanguageStudy
    lr: float  # the shared rate stage 1 chose
    rate_steps: tuple[float, ...]  # stage 1's window as measured (rates 10^e)
    rate_loss: torch.Tensor  # (2, rates) mean log final loss: unscaled, 1/sqrt(d_k) defaults
    plane: dict[tuple[int, int], torch.Tensor]  # (u, w) -> (choose seeds,) final loss
    windows: dict[int, tuple[int, ...]]  # each row's window of w as measured
    best: tuple[int, int]  # the plane's best point on the choice seeds
    row_best: dict[int, tuple[int, int]]  # each row's best point
    confirmed: dict[str, GPTConfig]  # the confirmed settings, by name
    records: dict[str, GPTRecords]  # their records on the confirm seeds (trailing axis: seeds)

    def final(self, name: str) -> torch.Tensor:
        """(confirm seeds,) a confirmed setting's final held-out loss."""
        return self.records[name].final_loss

    def mean_log(self, point: tuple[int, int]) -> float:
        """A plane point's mean log final loss over the choice seeds (what chooses)."""
        return self.plane[point].log().mean().item()

    def on_edge(self, u: int) -> bool:
        """Whether row u's best w is an end of its row's window (a further w not measured)."""
        window = self.windows[u]
        return self.row_best[u][1] in (window[0], window[-1])


@memo
def run_language(study: LanguageStudy | None = None) -> LanguageResult:
    """The three stages of the study (the current profile's by default). Each stage trains
    its arms in even parts (:meth:`sdpa.gpt.GPTSweep.parts`) that the build's workers share
    (:func:`sdpa.runtime.each`), and joins them (:meth:`sdpa.gpt.GPTHistory.joined`)."""
    study = study or language_study()

    # Stage 1: the shared rate. Both defaults at each rate 10^e, on the choice seeds.
    defaults = (study.defaults["none"], study.defaults["inv_sqrt"])
    rate_losses: dict[float, torch.Tensor] = {}  # e -> (2,) mean log final loss
    new = list(study.rate_steps)
    while new:
        sweep = study.sweep(defaults, tuple(10**e for e in new), study.choose_seeds)
        history = GPTHistory.joined(sweep, each(run_gpt, [(p,) for p in sweep.parts()]))
        for e in new:
            rate_losses[e] = torch.stack([history.arm(c, 10**e).final_loss.log().mean()
                                          for c in defaults])
        nxt = widened({e: v.mean().item() for e, v in rate_losses.items()}, 0.5,
                      study.rate_reach)
        new = [] if nxt is None else [nxt]
    rate_steps = sorted(rate_losses)
    rate_loss = torch.stack([rate_losses[e] for e in rate_steps], dim=1)
    lr = 10 ** rate_steps[int(rate_loss.mean(0).argmin())]

    # Stage 2: the plane at that rate. Each row u at w = u + each offset, on the choice seeds.
    plane: dict[tuple[int, int], torch.Tensor] = {}  # (u, w) -> (choose seeds,) final loss
    new = [(u, u + k) for u in study.u_steps for k in study.w_offsets]
    while new:
        arms = tuple(study.point(u, w) for u, w in new)
        sweep = study.sweep(arms, (lr,), study.choose_seeds)
        history = GPTHistory.joined(sweep, each(run_gpt, [(p,) for p in sweep.parts()]))
        plane |= {p: history.arm(c, lr).final_loss for p, c in zip(new, arms)}
        score = {p: loss.log().mean().item() for p, loss in plane.items()}
        new = []
        for u in study.u_steps:
            row = {w: value for (i, w), value in score.items() if i == u}
            w = widened(row, 1, (u - study.w_reach, u + study.w_reach))
            new += [] if w is None else [(u, w)]
    windows = {u: tuple(sorted(w for i, w in plane if i == u)) for u in study.u_steps}
    best = min(score, key=score.__getitem__)
    row_best = {u: min(((u, w) for w in windows[u]), key=score.__getitem__)
                for u in study.u_steps}

    # Stage 3: the confirmation, on fresh seeds.
    confirmed = dict(study.defaults)
    confirmed["best"] = study.point(*best)
    for u, point in row_best.items():
        confirmed[f"row {u}"] = study.point(*point)
    for name, d_model, d_head in study.spreads:
        u = study.spread_steps(d_model, d_head)
        without, scaled = spread_settings(name)
        confirmed[without] = study.point(u, 0)
        confirmed[scaled] = study.point(u, 0, Scale.INV_SQRT)
    sweep = study.sweep(tuple(dict.fromkeys(confirmed.values())), (lr,), study.confirm_seeds)
    confirm = GPTHistory.joined(sweep, each(run_gpt, [(p,) for p in sweep.parts()]))
    return LanguageResult(
        study=study, lr=lr, rate_steps=tuple(rate_steps), rate_loss=rate_loss, plane=plane,
        windows=windows, best=best, row_best=row_best, confirmed=confirmed,
        records={name: confirm.arm(c, lr) for name, c in confirmed.items()})


#: The verdict's word for an interval that holds zero (never "ties": the data may differ).
NOT_TOLD_APART = "is not told apart"


def turns(rows: list[dict]) -> list[tuple[dict, dict]]:
    """Where the comparison turns, over ``rows`` sorted by spread (each with a ``word``): between
    two spreads whose intervals both exclude zero, on opposite sides, with no interval that
    excludes zero between them. A change to or from "is not told apart" is not a turn."""
    decided = [row for row in rows if row["word"] != NOT_TOLD_APART]
    return [(a, b) for a, b in zip(decided, decided[1:]) if a["word"] != b["word"]]


@dataclass(frozen=True)
class SpreadPair:
    """One starting spread of the verdict: row u without the factor against row u + 1 (the
    1/sqrt(d_k) model from the same weights), each at its best w, on the fresh seeds."""

    u: int
    spread: float  # the std of the unscaled logits at initialisation
    without: str  # the confirmed settings' names
    scaled: str
    difference: Interval  # without minus with the factor (nats), at the corrected level

    @property
    def word(self) -> str:
        """What the interval says: "is not told apart" when it holds zero, else who ends
        higher."""
        if not self.difference.excludes_zero:
            return NOT_TOLD_APART
        return "ends higher" if self.difference.mean > 0 else "ends lower"


def corrected_confidence(study: LanguageStudy) -> float:
    """Each interval's level, so that the verdict's intervals hold together at the study's
    ``confidence`` (Bonferroni over the spreads compared: one fewer than the rows)."""
    return 1 - (1 - study.confidence) / (len(study.u_steps) - 1)


def spread_pairs(out: LanguageResult) -> list[SpreadPair]:
    """The verdict's comparisons, from the widest starting spread to the narrowest."""
    study, level = out.study, corrected_confidence(out.study)
    return [SpreadPair(u, study.spread(u), f"row {u}", f"row {k}",
                       paired(out.final(f"row {u}"), out.final(f"row {k}"), confidence=level))
            for u, k in zip(study.u_steps, study.u_steps[1:])]


RULE_LABELS = {"none": "no factor", "inv_sqrt": "1/√d_k", "inv": "1/d_k",
               "qk_norm": "QK-norm + 1/√d_k", "best": "the plane's best point"}

