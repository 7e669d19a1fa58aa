"""What each confirmed setting does over training: held-out loss, attention entropy, the
largest logit, and how much gradient reaches W_Q compared with W_V.

The confirmation runs of ``sdpa.language.run_language``: every rule's default and the
plane's best point, on the fresh seeds. Lines are the mean over those seeds; the held-out
loss is measured every ``steps/evals`` steps, the rest at every step (mean of the layers
and heads for the entropy, the largest over the layers for the logit, the mean of the
layers for |grad W_Q| / |grad W_V|, Frobenius norms).
"""

import sdpa
from sdpa.language import RULE_LABELS, language_study, run_language
from sdpa.stats import mean, paired

SETTINGS = ("none", "inv_sqrt", "inv", "qk_norm", "best")


def end_of(values, share=0.1):
    """The mean of the last tenth of a curve (steps, seeds), per seed."""
    return values[-max(1, round(share * len(values))):].mean(0)


def training_curves(study=None):
    study = study or language_study()
    out = run_language(study)
    rules = {}
    for name in SETTINGS:
        r = out.records[name]
        # a trained W_Q of qk_lr != 1 is W / qk_lr, so its gradient is qk_lr times W's
        curves = {"entropy": r.entropy.mean((1, 2)), "max_logit": r.max_logit,
                  "grad_ratio": r.grad_ratio.mean(1) / out.confirmed[name].qk_lr}
        rules[name] = {"label": RULE_LABELS[name], "held_out": r.held_out_loss.mean(-1).tolist(),
                       **{k: v.mean(-1).tolist() for k, v in curves.items()},
                       "end": {k: end_of(v).tolist() for k, v in curves.items()},
                       "start_ratio": curves["grad_ratio"][0].tolist()}
    return {"eval_steps": list(study.sweep((), (), ()).eval_steps), "rules": rules}


STUDY = language_study()
result = training_curves(STUDY)


print(sdpa.markdown_table(
    ["rule", "|∇W_Q| / |∇W_V|, first step", "over the last tenth of training: entropy (nats)",
     "largest logit", "|∇W_Q| / |∇W_V|"],
    [(c["label"], mean(c["start_ratio"]), mean(c["end"]["entropy"]),
      mean(c["end"]["max_logit"]), mean(c["end"]["grad_ratio"]))
     for c in result["rules"].values()],
    caption="The panels' numbers: the first step, and the mean over the last tenth of "
    "training, averaged over the confirmation seeds.",
))


def first_step(result, d_head):
    """From one rule to the next, how much the first step's |grad W_Q| / |grad W_V| falls, over
    sqrt(d_k): paired by seed, as a ratio with its 95% t interval."""
    start = {name: c["start_ratio"] for name, c in result["rules"].items()}
    root = d_head**0.5
    return {pair: paired(start[pair[0]], [x * root for x in start[pair[1]]], log=True)
            for pair in (("none", "inv_sqrt"), ("inv_sqrt", "inv"))}


falls = first_step(result, STUDY.model.d_head)
print(f"At the first step, the ratio |∇W_Q| / |∇W_V| falls by √d_k "
      f"{falls[('none', 'inv_sqrt')].ratio()} from no factor to 1/√d_k, and by √d_k "
      f"{falls[('inv_sqrt', 'inv')].ratio()} from 1/√d_k to 1/d_k (d_k = "
      f"{STUDY.model.d_head}; paired by seed, 95% t intervals over "
      f"{len(result['rules']['none']['start_ratio'])} fresh seeds).\n")

figure = sdpa.Figure(
    "lm-training-curves",
    caption="Every rule's default and the plane's best point over training (mean over the "
    "fresh seeds). Top left: "
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
    styles = ["o-", "s--", "^:", "D-.", "v-"]
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
