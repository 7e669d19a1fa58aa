"""What dropping the factor costs one recall head, against how wide the unscaled logits start.

At each starting spread the unscaled head and the 1/sqrt(d_k) head start from the same
weights, W_Q and W_K drawn so that the unscaled logits have that standard deviation, and
each is tuned alike (``sdpa.plane.run_spreads``). Per spread: the unscaled loss minus the
scaled loss on the fresh seeds, paired by seed, with a 95% t interval, and the ratio of the
two losses, and each rule's chosen shared rate and W_Q/W_K rate step w, marked where the
choice is an end of what was measured. The line under the table sorts the spreads by what
their intervals show.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.plane import run_spreads
from sdpa.sizes import sizes
from sdpa.stats import chance_note, paired
from sdpa.tuning import draw_costs

STUDY = sizes().spreads


RULES = (Scale.NONE, Scale.INV_SQRT)


def chosen_setting(study, out, rule, spread):
    """A rule's chosen setting at a spread: its shared rate and w, and which is on an edge."""
    arm, lr = out.chosen[(rule, spread)]
    lrs, w = study.plane.lrs(study.optimizer), study.w_steps[study.arms(rule, spread).index(arm)]
    return {"lr": lr, "w": w, "lr_edge": lr in (lrs[0], lrs[-1]),
            "w_edge": len(study.w_steps) > 1 and w in (study.w_steps[0], study.w_steps[-1])}


def recall_points(study):
    out = run_spreads(study)
    pairs = [(x, out.confirm[(Scale.NONE, x)], out.confirm[(Scale.INV_SQRT, x)])
             for x in out.spreads]
    return [{"spread": x, "difference": paired(a, b), "log_ratio": paired(a, b, log=True),
             "chosen": {rule.value: chosen_setting(study, out, rule, x) for rule in RULES}}
            for x, a, b in pairs]


def setting(c, study=STUDY):
    """``0.01, w = 1`` with ``(edge)`` after each choice at an end of what was measured (w
    only where the study tunes it)."""
    w = f", w = {c['w']}" + " (edge)" * c["w_edge"] if len(study.w_steps) > 1 else ""
    return f"{c['lr']:.3g}" + " (edge)" * c["lr_edge"] + w


result = recall_points(STUDY)

figure = sdpa.Figure(
    "starting-spread",
    caption=f"The cost of dropping the factor (d_k = {STUDY.d_k}, Adam, {STUDY.plane.steps} "
    "steps) against the starting spread, "
    + ("each rule's shared and W_Q/W_K rates" if len(STUDY.w_steps) > 1
       else "each rule's shared rate")
    + " tuned at every spread. Above zero: the head without the factor ends higher. Bars: 95% t "
    f"intervals over {len(STUDY.plane.confirm_seeds)} fresh seeds, paired; dashed: named spreads.",
    alt="The loss difference between the unscaled and the scaled recall head against the "
    "starting spread on a log axis, with a dotted line at zero.",
    size=(4.6, 3.3),
)
with figure as ax:
    draw_costs(ax, [p["spread"] for p in result], [p["difference"] for p in result],
               sdpa.PALETTE[3])
    for _, spread in STUDY.named:
        ax.axvline(spread, color=sdpa.PALETTE[7], lw=0.6, ls="--")
print(figure.html)

print(sdpa.markdown_table(
    ["starting spread", "what it is", "without − with the factor (nats)",
     "without / with (ratio)", *(f"{rule.label}: chosen rate" + ", w" * (len(STUDY.w_steps) > 1)
                                 for rule in RULES)],
    [(p["spread"], next((n for n, x in STUDY.named if x == p["spread"]), "—"),
      str(p["difference"]), p["log_ratio"].ratio(),
      *(setting(p["chosen"][rule.value]) for rule in RULES)) for p in result],
    align="rlrrll",
    caption="The figure's points, and the ratio of the two losses, paired by seed (a stuck seed "
    "widens the difference's interval more than the ratio's); each rule's chosen shared rate"
    + (f" and W_Q/W_K step w (from {STUDY.w_steps[0]} to {STUDY.w_steps[-1]})"
       if len(STUDY.w_steps) > 1 else "") + "; (edge): an end of what was measured. "
    + chance_note(len(result)) + " (the ratio's).",
))


def reading(points):
    """The spreads sorted by what the ratio's interval shows."""
    groups = {"higher": [], "apart": [], "lower": []}
    for p in points:
        r = p["log_ratio"]
        groups["higher" if r.low > 0 else "lower" if r.high < 0 else "apart"].append(
            f"{p['spread']:.3g}")
    words = {"higher": "the head without the factor ends higher at",
             "apart": "the fresh seeds do not tell the two apart at",
             "lower": "the head without the factor ends lower at"}
    return "; ".join(f"{words[k]} {', '.join(v)}" for k, v in groups.items() if v)


print(f"Read off the table, starting spreads by what their interval shows (this build: "
      f"{len(STUDY.plane.confirm_seeds)} fresh seeds, 95% t intervals of the ratio): "
      f"{reading(result)}.\n")
