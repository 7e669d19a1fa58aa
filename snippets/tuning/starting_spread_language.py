"""The language model on the same axis: what dropping the factor costs, against how wide
the unscaled logits start.

Each pair of the language model's plane rows (``sdpa.language.run_language``) is the same
comparison as the recall head's, each row at its best W_Q/W_K rate; the named spreads of
other models are run at the default rate. The unscaled loss minus the scaled loss on the
fresh seeds, paired by seed, with a 95% t interval.
"""

import sdpa
from sdpa.language import language_study, logit_spread, run_language, spread_settings
from sdpa.stats import paired
from sdpa.tuning import draw_costs

STUDY = language_study()


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


result = language_points(STUDY)

figure = sdpa.Figure(
    "starting-spread-language",
    caption=f"The language model ({STUDY.steps} steps) on the same axis: pairs of its plane's "
    "rows (each at its best W_Q/W_K rate)"
    + (" and the named spreads at the default rate" if STUDY.spreads else "") + ". Above "
    "zero: the model without the factor ends higher. Bars: 95% t intervals over the fresh "
    "seeds, paired by seed.",
    alt="The loss difference between the language model without and with the factor against "
    "the starting spread on a log axis, with a dotted line at zero.",
    size=(4.6, 3.3),
)
with figure as ax:
    draw_costs(ax, [p["spread"] for p in result], [p["difference"] for p in result],
               sdpa.PALETTE[4])
print(figure.html)

print(sdpa.markdown_table(
    ["starting spread", "what it is", "without − with the factor (nats)"],
    [(p["spread"], p.get("name", "its plane's rows"), str(p["difference"])) for p in result],
    align="rlr",
    caption="The figure's points: mean difference over the fresh seeds and its 95% t interval.",
))
