"""Speed apart from capability: every rule's default and the plane's best point, re-tuned at
each budget, and what the longest budget says.

At each budget the shared rate is chosen again on the choice seeds, for a warm-up and a
cosine decay over that budget (``sdpa.tuning.run_budgets``); the plane's own budget is the
plane's runs. On the fresh seeds each default is compared with the best point, paired by
seed: the ratio of final losses and its 95% t interval. A gap that closes as the budget
grows was speed; one that stays at the longest budget, while the losses have stopped
falling, is about what the head reaches.
"""


import sdpa
from sdpa.sizes import sizes
from sdpa.stats import paired
from sdpa.training import OPTIMIZER_LABELS
from sdpa.tuning import run_budgets

STUDY = sizes().budgets
LABELS = {"none": "no factor", "inv_sqrt": "1/√d_k", "inv": "1/d_k", "best": "best point"}
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
                    row["at"][steps] = {
                        "lr": run.lr, "interior": run.interior, "loss": run.confirm,
                        "geomean": run.confirm.log().mean().exp().item(),
                        "ratio": None if name == "best" else paired(run.confirm, best.confirm,
                                                                   log=True)}
                rows.append(row)
    return rows


result = budgets(STUDY)


def cell(at):
    text = f"{at['geomean']:.3g} at {at['lr']:.3g}" + ("" if at["interior"] else " (edge)")
    if at["ratio"] is not None:
        text += f", {at['ratio'].ratio()}"
    return text


print(sdpa.markdown_table(
    ["optimiser", "d_k", "setting", *[f"{steps} steps" for steps in BUDGETS]],
    [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], LABELS[r["setting"]],
      *[cell(r["at"][steps]) for steps in BUDGETS]) for r in result],
    align="lrl" + "r" * len(BUDGETS),
    caption="Each setting re-tuned at each budget: final loss (geometric mean over "
    f"{len(STUDY.plane.confirm_seeds)} fresh seeds) at the shared rate chosen for that budget, "
    "and its ratio to the best point's on the same seeds with a 95% t interval. (edge): the "
    "chosen rate is the window's first or last.",
))


def verdict(row):
    """What the longest budget says about one default (see the module docstring)."""
    last, before = (row["at"][s] for s in (BUDGETS[-1], BUDGETS[-2]))
    behind = last["ratio"].low > 0
    falling = last["geomean"] < 0.5 * before["geomean"]
    if not behind:
        return "not told apart from the best point (its interval holds 1)"
    return "still behind, and still falling" if falling else "still behind, and flattened"


lines = [f"{OPTIMIZER_LABELS[r['optimizer']]}, d_k = {r['d_k']}, {LABELS[r['setting']]}: "
         f"{verdict(r)}" for r in result if r["setting"] != "best"]
print(f"At the longest budget, {BUDGETS[-1]} steps (re-tuned): " + "; ".join(lines) + ". "
      "'Still falling': its loss more than halved since the budget before, so the longest "
      "budget has not shown where it ends.")
