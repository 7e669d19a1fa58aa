"""A learned temperature at high learning rates: does it run away?

One recall head at d_k = 64 with the scale fixed at 1/sqrt(d_k), and with the scale
learned from there (as log c, same optimiser and rate, no regularisation), at two
learning rates one and two grid steps above the shared rate the plane chose for the
1/sqrt(d_k) default (``sdpa.tuning.LearnedScaleStudy``), with the plane's warm-up and
cosine schedule, on its fresh seeds. Per arm and rate: the final loss, the largest logit
seen in training, the learned scale at the end relative to its start, and the runs that
diverged (final loss NaN or above ten times chance, ``sdpa.ablation.DIVERGED``).
"""

import math

import torch

import sdpa
from sdpa.ablation import DIVERGED, final_loss
from sdpa.plane import run_plane
from sdpa.recall import run_recalls
from sdpa.sizes import sizes
from sdpa.training import OPTIMIZER_LABELS

STUDY = sizes().learned_scale


def learned_scale(study):
    """Each arm and rate of ``study``, above the best shared rate of 1/sqrt(d_k)."""
    rows, planes = [], run_plane(study.plane)
    for optimizer, history in zip(study.plane.optimizers, run_recalls(study.experiments(planes))):
        chance = math.log(history.experiment.n_values)
        lrs = study.rates(planes[optimizer, study.d_k])
        for arm in (study.fixed, study.learned):
            for lr, k in zip(lrs, study.above):
                curves = history.arm(arm, lr)
                loss = final_loss(curves, study.plane.last, chance)
                rows.append({
                    "optimizer": optimizer, "lr": lr, "steps_above": k,
                    "times_best": 10 ** (k / study.plane.per_decade),
                    "learned": arm.learn_scale, "final_loss": loss, "diverged": loss.isinf(),
                    "max_logit": torch.nan_to_num(curves.max_logit, nan=math.inf).amax(0),
                    "scale_ratio": curves.scale[-1] / curves.scale[0],
                })
    return rows


result = learned_scale(STUDY)


def loss(r):
    finite = r["final_loss"][torch.isfinite(r["final_loss"])]
    if len(finite) == 0:
        return "—"
    return f"{finite.mean().item():.3f} ± {finite.std().item():.3f}" if len(finite) > 1 else (
        f"{finite.item():.3f}")


def scale(r):
    ratio = r["scale_ratio"][~r["diverged"]]
    if not r["learned"]:
        return "1 (fixed)"
    return "—" if len(ratio) == 0 else f"{ratio.min().item():.2g}–{ratio.max().item():.2g}"


def logit(r):
    kept = r["max_logit"][~r["diverged"]]
    return "—" if len(kept) == 0 else f"{kept.median().item():.0f}"


n_seeds = len(STUDY.plane.confirm_seeds)
print(
    sdpa.markdown_table(
        ["optimiser", "learning rate", "× best rate", "scale", "final loss", "largest logit",
         "learned scale, end ÷ start (min–max)", "diverged"],
        [(OPTIMIZER_LABELS[r["optimizer"]], f"{r['lr']:.3g}",
          f"{r['times_best']:.2g}", "learned" if r["learned"] else "fixed 1/√d_k", loss(r),
          logit(r), scale(r), f"{int(r['diverged'].sum())}/{n_seeds}")
         for r in sorted(result, key=lambda r: (r["optimizer"], r["lr"], r["learned"]))],
        align="lrrllrlr",
        caption=f"One head, d_k = {STUDY.d_k}, {STUDY.plane.steps} steps, {n_seeds} seeds per "
        "row; × best rate: over the rate chosen for the 1/√d_k default. Final loss (mean ± "
        "std) and largest |logit| (median) over the runs that did not diverge (final loss NaN "
        f"or above {DIVERGED} times chance).",
    )
)


def reading(rows):
    """Per optimiser and rate, where the learned scale ends against its start, in the runs
    that did not diverge."""
    lines = []
    for r in (r for r in rows if r["learned"]):
        kept = r["scale_ratio"][~r["diverged"]]
        where = (f"{OPTIMIZER_LABELS[r['optimizer']]}, {r['steps_above']} grid "
                 f"step{'s' if r['steps_above'] > 1 else ''} above the best rate")
        if len(kept) == 0:
            lines.append(f"- {where}: every run diverged")
            continue
        below = int((kept < 1).sum())
        words = (f"below its start in all {len(kept)}" if below == len(kept) else
                 f"above its start in {len(kept) - below} of {len(kept)}")
        lines.append(f"- {where}: the learned scale ends {words} runs that did not diverge "
                     f"(largest end ÷ start {kept.max().item():.3g})")
    return lines


print("Read off the table (this build):\n")
print("\n".join(reading(result)) + "\n")
