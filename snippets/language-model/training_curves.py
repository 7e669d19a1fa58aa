"""What each tuned rule does over training: held-out loss, attention entropy, the largest
logit, and how much gradient reaches W_Q compared with W_V.

The same runs as the table (``sdpa.language.run_language``): each rule at its chosen
setting, on the confirmation seeds. Lines are the mean over those seeds; the held-out loss
is measured every ``steps/evals`` steps, the rest at every step (mean of the layers and heads
for the entropy, the largest over the layers for the logit, the mean of the layers for
|grad W_Q| / |grad W_V|, Frobenius norms).
"""

import sdpa
from sdpa.language import language_study, run_language


def end_of(values, share=0.1):
    """The mean of the last tenth of a curve (steps, seeds), per seed."""
    return values[-max(1, round(share * len(values))):].mean(0)


def training_curves(study=None):
    study = study or language_study()
    tuned = run_language(study)
    return {
        "eval_steps": list(study.sweep().eval_steps),
        "rules": {name: {
            "label": r.label,
            "held_out": r.held_out.mean(-1).tolist(),
            "entropy": r.entropy.mean(-1).tolist(),
            "max_logit": r.max_logit.mean(-1).tolist(),
            "grad_ratio": r.grad_ratio.mean(-1).tolist(),
            "end": {k: end_of(getattr(r, k)).tolist()
                    for k in ("entropy", "max_logit", "grad_ratio")},
            "start_ratio": r.grad_ratio[0].tolist(),
        } for name, r in tuned.items()},
    }


result = training_curves()



def mean(values):
    return sum(values) / len(values)


print(sdpa.markdown_table(
    ["rule", "|∇W_Q| / |∇W_V|, first step", "over the last tenth of training: entropy (nats)",
     "largest logit", "|∇W_Q| / |∇W_V|"],
    [(c["label"], mean(c["start_ratio"]), mean(c["end"]["entropy"]),
      mean(c["end"]["max_logit"]), mean(c["end"]["grad_ratio"]))
     for c in result["rules"].values()],
    caption="The panels' numbers: the first step, and the mean over the last tenth of "
    "training, averaged over the confirmation seeds.",
))

figure = sdpa.Figure(
    "lm-training-curves",
    caption="The tuned rules over training (mean over the confirmation seeds). Top left: "
    "held-out loss. Top right: mean attention entropy (nats; a uniform row over the context "
    "has the most). Bottom left: the largest attention logit (log scale). Bottom right: "
    "|∇W_Q| / |∇W_V| (log scale), how much gradient reaches the query weights for each unit "
    "reaching the value weights.",
    alt="Four panels of lines against the training step, one line per scale rule: held-out "
    "loss falling, attention entropy, the largest logit, and the gradient ratio of the query "
    "and value weights.",
    nrows=2, ncols=2, size=(7.4, 5.6),
)
with figure as ((loss, ent), (logit, ratio)):
    styles = ["o-", "s--", "^:", "D-."]
    for style, color, c in zip(styles, sdpa.PALETTE, result["rules"].values()):
        steps = range(len(c["entropy"]))
        every = max(1, len(c["entropy"]) // 8)
        kw = {"color": color, "label": c["label"], "markevery": every, "markersize": 3.5}
        loss.plot(result["eval_steps"], c["held_out"], style, color=color, label=c["label"],
                  markersize=3.5)
        ent.plot(steps, c["entropy"], style, **kw)
        logit.plot(steps, c["max_logit"], style, **kw)
        ratio.plot(steps, c["grad_ratio"], style, **kw)
    loss.set(ylabel="held-out loss (nats per character)")
    ent.set(ylabel="attention entropy (nats)")
    logit.set(yscale="log", xlabel="training step", ylabel="largest attention logit")
    ratio.set(yscale="log", xlabel="training step", ylabel="|∇W_Q| / |∇W_V|")
    loss.legend(fontsize=7)
print(figure.html)
