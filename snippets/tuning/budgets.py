"""Longer budgets: the study's settings (``sizes().budgets.settings``: rules' defaults and the
plane's best point; the quick build leaves 1/d_k out), the shared rate re-tuned at each
budget.

At each budget the shared rate is chosen again on the choice seeds, for a warm-up and a
cosine decay over that budget (``sdpa.tuning.run_budgets``); the plane's own budget is the
plane's runs. Each setting keeps the point (u, w) it had at the plane's budget. On the
fresh seeds each default is compared with the best point, paired by seed: the ratio of
final losses and its 95% t interval.
"""


import sdpa
from sdpa.plane import SETTING_LABELS
from sdpa.sizes import sizes
from sdpa.stats import chance_note, paired
from sdpa.training import OPTIMIZER_LABELS
from sdpa.tuning import run_budgets

STUDY = sizes().budgets
BUDGETS = (STUDY.plane.steps, *STUDY.budgets)


def budgets(study):
    runs = run_budgets(study)
    rows = []
    for optimizer in study.optimizers:
        for d_k in study.d_ks:
            for name in study.settings:
                row = {"optimizer": optimizer, "d_k": d_k, "setting": name, "at": {}}
                for steps in BUDGETS:
                    run = runs[(steps, optimizer, d_k, name)]
                    best = runs[(steps, optimizer, d_k, "best")]
                    finite = bool(run.confirm.isfinite().all() and best.confirm.isfinite().all())
                    row["at"][steps] = {
                        "lr": run.lr, "interior": run.interior, "stability": run.stability,
                        "loss": run.confirm,
                        "geomean": run.confirm.log().mean().exp().item(),
                        "ratio": None if name == "best" or not finite else paired(
                            run.confirm, best.confirm, log=True)}
                rows.append(row)
    return rows


result = budgets(STUDY)


def verdict(ratio):
    """What the fresh seeds' interval says about a setting against the best point."""
    if ratio is None:
        return "some runs diverged"
    if ratio.low > 0:
        return "above the best point"
    return "below the best point" if ratio.high < 0 else "not told apart"


def cell(setting, at):
    text = (f"{at['geomean']:.3g} at {at['lr']:.3g}" + ("" if at["interior"] else " (edge)")
            + (" (stability)" if at["stability"] else ""))
    if setting == "best":
        return text
    ratio = f", {at['ratio'].ratio()}" if at["ratio"] is not None else ""
    return f"{text}{ratio}: {verdict(at['ratio'])}"


print(sdpa.markdown_table(
    ["optimiser", "d_k", "setting", *[f"{steps} steps" for steps in BUDGETS]],
    [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], SETTING_LABELS[r["setting"]],
      *[cell(r["setting"], r["at"][steps]) for steps in BUDGETS]) for r in result],
    align="lrl" + "r" * len(BUDGETS),
    caption="Each setting re-tuned at each budget: final loss (geometric mean over "
    f"{len(STUDY.plane.confirm_seeds)} fresh seeds) at its chosen rate, and its ratio to the best "
    "point's, paired, with a 95% t interval and what it says. (edge): the window's first or "
    "last rate; (stability): the next rate up diverged on a choice seed. "
    + chance_note(sum(at["ratio"] is not None for r in result for at in r["at"].values())) + ".",
))


print(f"How this build re-tuned: at {', '.join(f'{b:,}' for b in STUDY.budgets)} steps, "
      f"d_k = {', '.join(map(str, STUDY.d_ks))}, "
      f"{' and '.join(OPTIMIZER_LABELS[o] for o in STUDY.optimizers)}; each setting swept "
      f"grid steps of {', '.join(f'{k:+d}' for k in STUDY.shifts)} "
      f"(×10^(1/{STUDY.plane.per_decade})) "
      f"from its rate at {STUDY.plane.steps} steps.\n")
