"""The common axis of every training verdict: what dropping the factor costs, against how
wide the unscaled logits start.

First panel, the one-head recall task (d_k = 64, Adam): at each starting spread the unscaled head
and the 1/sqrt(d_k) head start from the same weights, W_Q and W_K drawn so that the
unscaled logits have that standard deviation, and each is tuned alike
(``sdpa.plane.run_spreads``). Second panel, the language model (``sdpa.language.run_language``):
each pair of the plane's rows is the same comparison, each row at its best W_Q/W_K rate,
and the named spreads of other models at their default rate. Both: the unscaled loss minus
the scaled loss on the fresh seeds, paired by seed, with a 95% t interval.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.language import language_study, logit_spread, run_language, spread_settings
from sdpa.plane import run_spreads
from sdpa.sizes import sizes
from sdpa.stats import paired

STUDY = sizes().spreads
LANGUAGE = language_study()


def recall_points(study):
    out = run_spreads(study)
    pairs = [(x, out.confirm[(Scale.NONE, x)], out.confirm[(Scale.INV_SQRT, x)])
             for x in out.spreads]
    return [{"spread": x, "difference": paired(a, b), "log_ratio": paired(a, b, log=True)}
            for x, a, b in pairs]


def language_points(study):
    out = run_language(study)
    here = logit_spread(study.model.d_model, study.model.d_head, study.model.init_std)
    points = [{"spread": here * study.multiplier(i) ** 2, "tuned": True,
               "difference": paired(out.final(f"row {i}"), out.final(f"row {k}"))}
              for i, k in zip(study.u_steps, study.u_steps[1:])]
    for name, d_model, d_head in study.spreads:
        points.append({"spread": logit_spread(d_model, d_head, study.model.init_std),
                       "tuned": False, "name": name,
                       "difference": paired(*map(out.final, spread_settings(name)))})
    return sorted(points, key=lambda p: p["spread"])


result = {"recall": recall_points(STUDY), "language": language_points(LANGUAGE)}


def draw(ax, points, color, label):
    x = [p["spread"] for p in points]
    mean = [p["difference"].mean for p in points]
    bars = [[p["difference"].mean - p["difference"].low for p in points],
            [p["difference"].high - p["difference"].mean for p in points]]
    ax.errorbar(x, mean, yerr=bars, fmt="o-", color=color, ms=4, capsize=2, label=label)
    ax.axhline(0, color=sdpa.INK, lw=0.8, ls=":")
    ax.set(xscale="log", xlabel="std of the unscaled logits at initialisation",
           ylabel="loss without − with 1/√d_k (nats)")


figure = sdpa.Figure(
    "starting-spread",
    caption="What dropping the factor costs, against how wide the unscaled logits start. "
    f"One recall head (first panel; d_k = {STUDY.d_k}, Adam, {STUDY.plane.steps} steps), "
    "both rules tuned at every spread; marked (dashed): the named spreads of the table below. "
    "The language model (second panel; "
    f"{LANGUAGE.steps} steps), pairs of its plane's rows (each at its best W_Q/W_K rate) and "
    "the named spreads at the default rate. Above zero: the head without the factor ends "
    "higher. Bars: 95% t intervals over the fresh seeds, paired by seed.",
    alt="Two panels of the loss difference between the unscaled and the scaled head against "
    "the starting spread on a log axis, with a dotted line at zero.",
    ncols=2,
    size=(7.6, 3.3),
)
with figure as (left, right):
    draw(left, result["recall"], sdpa.PALETTE[3], "recall head")
    for name, spread in STUDY.named:
        left.axvline(spread, color=sdpa.PALETTE[7], lw=0.6, ls="--")
    left.set_title("one recall head")
    draw(right, result["language"], sdpa.PALETTE[4], "language model")
    right.set_title("the language model")
print(figure.html)

print(sdpa.markdown_table(
    ["model", "starting spread", "what it is", "without − with the factor (nats)",
     "without / with (ratio)"],
    [("recall head", p["spread"], next((n for n, x in STUDY.named if x == p["spread"]), "—"),
      str(p["difference"]), p["log_ratio"].ratio()) for p in result["recall"]]
    + [("language model", p["spread"], p.get("name", "its plane's rows"),
        str(p["difference"]), "") for p in result["language"]],
    align="lrlrr",
    caption="The figure's points: mean difference over the fresh seeds and its 95% t interval; "
    "for the recall head also the ratio of the two losses, paired by seed (one seed that "
    "stays stuck widens the difference's interval more than the ratio's).",
))
