"""What dropping the factor costs one recall head, against how wide the unscaled logits start.

At each starting spread the unscaled head and the 1/sqrt(d_k) head start from the same
weights, W_Q and W_K drawn so that the unscaled logits have that standard deviation, and
each is tuned alike (``sdpa.plane.run_spreads``). Per spread: the unscaled loss minus the
scaled loss on the fresh seeds, paired by seed, with a 95% t interval, and the ratio of the
two losses. The line under the table sorts the spreads by what their intervals show.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.plane import run_spreads
from sdpa.sizes import sizes
from sdpa.stats import paired
from sdpa.tuning import draw_costs

STUDY = sizes().spreads


def recall_points(study):
    out = run_spreads(study)
    pairs = [(x, out.confirm[(Scale.NONE, x)], out.confirm[(Scale.INV_SQRT, x)])
             for x in out.spreads]
    return [{"spread": x, "difference": paired(a, b), "log_ratio": paired(a, b, log=True)}
            for x, a, b in pairs]


result = recall_points(STUDY)

figure = sdpa.Figure(
    "starting-spread",
    caption="What dropping the factor costs one recall head, against how wide the unscaled "
    f"logits start (d_k = {STUDY.d_k}, Adam, {STUDY.plane.steps} steps), both rules tuned at "
    "every spread. Dashed: the named spreads of the table below. Above zero: the head "
    f"without the factor ends higher. Bars: 95% t intervals over {len(STUDY.plane.confirm_seeds)} "
    "fresh seeds, paired by seed.",
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
     "without / with (ratio)"],
    [(p["spread"], next((n for n, x in STUDY.named if x == p["spread"]), "—"),
      str(p["difference"]), p["log_ratio"].ratio()) for p in result],
    align="rlrr",
    caption="The figure's points: mean difference over the fresh seeds and its 95% t "
    "interval, and the ratio of the two losses, paired by seed (one seed that stays stuck "
    "widens the difference's interval more than the ratio's).",
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
