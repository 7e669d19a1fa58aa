"""The language model's W_Q/W_K plane: the shared rate tuned once, every (u, v) point of the
plane at that rate on the choice seeds, and what the fresh seeds confirm.

Each point is the model without the factor, W_Q and W_K started d_k^(-u/4) times GPT-2's
draw and learning at d_k^(-v/4) times the shared rate (``sdpa.language.run_language``);
by the equivalence (under Adam) the 1/sqrt(d_k) default is the point (1, 1) and 1/d_k's
is (2, 2). Rows with u < 0 start wider than GPT-2 does at this width.
"""

import sdpa
from sdpa.language import RULE_LABELS, language_study, logit_spread, run_language
from sdpa.stats import paired

STUDY = language_study()


def plane(study):
    out = run_language(study)
    here = logit_spread(study.model.d_model, study.model.d_head, study.model.init_std)
    grid = {point: loss for point, loss in zip(study.points, out.plane_loss)}
    base = out.final("inv_sqrt")
    confirmed = [{"name": name, "label": RULE_LABELS.get(name, name),
                  "loss": out.final(name), "versus": paired(out.final(name), base),
                  "versus_best": paired(out.final(name), out.final("best"))}
                 for name in ("none", "inv_sqrt", "inv", "qk_norm", "best")]
    return {"lr": out.lr, "lrs": list(study.lrs), "rate_loss": out.rate_loss.exp().tolist(),
            "grid": {p: loss.log().mean().exp().item() for p, loss in grid.items()},
            "spread": {i: here * study.multiplier(i) ** 2 for i in study.u_steps},
            "best": out.best, "confirmed": confirmed}


result = plane(STUDY)
r = result

print(sdpa.markdown_table(
    ["default", *[f"rate {lr:.2g}" for lr in r["lrs"]]],
    [(label, *[f"{x:.3f}" + (" ←" if lr == r["lr"] else "") for lr, x in zip(r["lrs"], row)])
     for label, row in zip(("no factor", "1/√d_k"), r["rate_loss"])],
    caption=f"Stage 1, the shared rate: both defaults at every rate, final held-out loss "
    f"(geometric mean over {len(STUDY.choose_seeds)} choice seeds); ← the rate chosen for "
    "both (the lowest mean log loss), used by every later run.",
))
print(sdpa.markdown_table(
    ["u (starting spread)", *[f"v = {v}" for v in STUDY.v_steps]],
    [(f"{u} ({r['spread'][u]:.3g})",
      *[f"{r['grid'][(u, v)]:.3f}" + (" ★" if (u, v) == r["best"] else "")
        for v in STUDY.v_steps]) for u in STUDY.u_steps],
    caption="Stage 2, the plane: final held-out loss at every point (geometric mean over the "
    "choice seeds) without the factor. Rows: W_Q and W_K start d_k^(−u/4) times GPT-2's "
    "draw (in brackets the std of the unscaled logits at the start); columns: they learn at "
    "d_k^(−v/4) times the shared rate. No factor's default is (0, 0), 1/√d_k's (1, 1), "
    "1/d_k's (2, 2); ★ the best point.",
))
print(sdpa.markdown_table(
    ["setting", "final held-out loss", "minus 1/√d_k's, paired", "minus the best point's"],
    [(c["label"], f"{c['loss'].mean():.3f} ± {c['loss'].std():.3f}", str(c["versus"]),
      str(c["versus_best"])) for c in r["confirmed"]],
    caption=f"Stage 3 on {len(STUDY.confirm_seeds)} fresh seeds: every rule's default and the "
    "plane's best point (QK-norm + 1/√d_k at its default too). Mean ± std; differences "
    "paired by seed, with a 95% t interval, in nats per character.",
))
