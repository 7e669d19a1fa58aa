"""Does one learning rate serve every head count? The recall block split into 1 to 8 heads.

One pre-LayerNorm block (``sdpa.models.RecallBlock``: residual stream, LayerNorm, W_O) of
d_model = 64 split into h = 1, 2, 4 or 8 heads of d_k = 64 / h, trained on associative
recall with Adam for 150 steps at four learning rates, on five seeds, with and without
the factor. For each head count and rule we report the mean final loss (the last 10
recorded steps) at each rate, and the rate with the lowest mean. A design rule that keeps
heads comparable should let one rate serve every split: the lines under the table compare the
rate best for one head with each head count's own best, paired by seed, with intervals.

It trains 160 small models (tens of seconds of one CPU core), so only the full profile runs
it; a quick build prints that the full build decides it.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.practice import final_losses
from sdpa.sizes import sizes
from sdpa.stats import paired

STUDY = sizes().head_count  # None in the quick profile


def measure():
    losses = {h: final_losses(STUDY, h) for h in STUDY.heads}
    best = {(h, rule): STUDY.lrs[int(loss.mean(-1).argmin())]
            for h, per_rule in losses.items() for rule, loss in per_rule.items()}
    return {"losses": losses, "best": best, "lrs": STUDY.lrs, "heads": STUDY.heads}


if STUDY is not None:
    result = measure()
    rows = [(h, STUDY.d_model // h, rule.label,
             *[result["losses"][h][rule][i].mean().item() for i in range(len(STUDY.lrs))],
             f"{result['best'][h, rule]:g}") for h in STUDY.heads for rule in STUDY.rules]
    print(sdpa.markdown_table(
        ["heads", "d_k", "logits", *[f"loss at {lr:g}" for lr in STUDY.lrs], "best rate"], rows,
        caption=f"The recall block, d_model = {STUDY.d_model}, Adam, {STUDY.steps} steps; mean "
        f"over {len(STUDY.seeds)} seeds of the loss over the last {STUDY.last} steps (chance: "
        "ln 32 = 3.47).",
    ))

    def one_rate(rule):
        """Does one rate serve every head count? The rate best (by mean) for one head, against
        each other head count's own best: the ratio of the final losses, paired by seed, with
        its 95% t interval (words it decides: ``Interval.compared``)."""
        lr = result["best"][STUDY.heads[0], rule]
        said = []
        for h in STUDY.heads[1:]:
            loss, best = result["losses"][h][rule], result["best"][h, rule]
            said.append("it is the best rate" if best == lr else "it " + paired(
                loss[STUDY.lrs.index(lr)], loss[STUDY.lrs.index(best)], log=True).compared())
        return (rule.label, f"{lr:g}", *said)

    print(sdpa.markdown_table(
        ["logits", "best rate for one head", *[f"that rate at {h} heads" for h in STUDY.heads[1:]]],
        [one_rate(rule) for rule in STUDY.rules], align="l" * (len(STUDY.heads) + 1),
        caption="One rate for every head count? The rate best for one head against each head "
        "count's own best: the ratio of the final losses, paired over "
        f"{len(STUDY.seeds)} seeds, with its 95% t interval."))

    def ends_over_best(heads):
        """Each end of the grid minus the scaled block's best rate: the loss difference,
        paired by seed, with its 95% t interval."""
        loss = result["losses"][heads][Scale.INV_SQRT]
        best = STUDY.lrs.index(result["best"][heads, Scale.INV_SQRT])
        return [paired(loss[end], loss[best]) for end in (0, len(STUDY.lrs) - 1)]

    inside = [0 < STUDY.lrs.index(result["best"][h, Scale.INV_SQRT]) < len(STUDY.lrs) - 1
              for h in STUDY.heads]
    where = ("inside the grid at every head count" if all(inside) else "at an edge of the grid "
             "at " + ", ".join(str(h) for h, ok in zip(STUDY.heads, inside) if not ok) + " heads")
    print(f"With the factor the best of the {len(STUDY.lrs)} rates (by mean) lies {where}; the "
          "table below gives each end of the grid against it.\n")
    print(sdpa.markdown_table(
        ["heads", f"loss at {STUDY.lrs[0]:g} minus at the best rate",
         f"loss at {STUDY.lrs[-1]:g} minus at the best rate"],
        [(h, *[f"{sdpa.fmt(i.mean)} [{sdpa.fmt(i.low)}, {sdpa.fmt(i.high)}]"
               for i in ends_over_best(h)]) for h in STUDY.heads],
        align="rrr",
        caption="With the factor: each end of the grid against the best rate, paired by seed, "
        "mean and 95% t interval."))
else:
    result = None
    print("!!! note \"The full build decides it\"\n    This training study (160 small models) runs "
          "only in the full profile (`SDPA_PROFILE=full`); this quick build does not run it.\n")
