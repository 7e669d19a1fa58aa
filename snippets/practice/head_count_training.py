"""Does one learning rate serve every head count? The recall block split into 1 to 8 heads.

One pre-LayerNorm block (``sdpa.models.RecallBlock``: residual stream, LayerNorm, W_O) of
d_model = 64 split into h = 1, 2, 4 or 8 heads of d_k = 64 / h, trained on associative
recall with Adam for 150 steps at three learning rates, on five seeds, with and without
the factor. For each head count and rule we report the mean final loss (the last 10
recorded steps) at each rate, and the rate with the lowest mean. A design rule that keeps
heads comparable should let one rate serve every split.

It trains 120 small models (about a minute of one CPU core), so only the full profile runs
it; a quick build prints that the full build decides it.
"""

import math

import sdpa
from sdpa.attention import Scale
from sdpa.recall import RecallExperiment, run_recall, scale_arms
from sdpa.ablation import final_loss

HEADS = (1, 2, 4, 8)
D_MODEL, STEPS, LAST = 64, 150, 10
LRS = (3e-3, 1e-2, 3e-2)
SEEDS = tuple(range(5))
RULES = (Scale.NONE, Scale.INV_SQRT)


def split(heads):
    """Final losses of one head count: {rule: tensor (rates, seeds)}."""
    experiment = RecallExperiment(d_k=D_MODEL // heads, d_model=D_MODEL, heads=heads,
                                  steps=STEPS, arms=scale_arms(rules=RULES), lrs=LRS,
                                  seeds=SEEDS, optimizer="adam")
    chance = math.log(experiment.n_values)
    loss = final_loss(run_recall(experiment).metrics, LAST, chance)
    return {rule: loss[i] for i, rule in enumerate(RULES)}


def measure():
    losses = {h: split(h) for h in HEADS}
    best = {(h, rule): LRS[int(loss.mean(-1).argmin())]
            for h, per_rule in losses.items() for rule, loss in per_rule.items()}
    return {"losses": losses, "best": best, "lrs": LRS, "heads": HEADS}


if sdpa.runtime.profile() == "full":
    result = measure()
    rows = [(h, D_MODEL // h, rule.label, *[result["losses"][h][rule][i].mean().item()
                                             for i in range(len(LRS))],
             f"{result['best'][h, rule]:g}") for h in HEADS for rule in RULES]
    print(sdpa.markdown_table(
        ["heads", "d_k", "logits", *[f"loss at {lr:g}" for lr in LRS], "best rate"], rows,
        caption=f"The recall block, d_model = {D_MODEL}, Adam, {STEPS} steps; mean over "
        f"{len(SEEDS)} seeds of the loss over the last {LAST} steps (chance: ln 32 = 3.47).",
    ))

    def says(rule):
        picks = [result["best"][h, rule] for h in HEADS]
        if len(set(picks)) == 1:
            return f"the best of the three rates is {picks[0]:g} at every head count"
        return "the best rate moves with the head count (" + ", ".join(
            f"{h} head{'s' * (h > 1)}: {lr:g}" for h, lr in zip(HEADS, picks)) + ")"

    print(f"\nWith the factor {says(Scale.INV_SQRT)}; without it, {says(Scale.NONE)}.\n")
else:
    result = None
    print("!!! note \"The full build decides it\"\n    This training study (120 small models) runs "
          "only in the full profile (`SDPA_PROFILE=full`); this quick build does not run it.\n")
