"""The language model's W_Q/W_K plane: the shared rate tuned once, each row's window of
rates at that shared rate on the choice seeds, and what the fresh seeds confirm.

Each point is the model without the factor, W_Q and W_K started d_k^(-u/4) times GPT-2's
draw and learning at d_k^(-w/4) times the shared rate (``sdpa.language.run_language``);
by the equivalence (under Adam) the 1/sqrt(d_k) default is the point (1, 1) and 1/d_k's
is (2, 2). Each row's window starts around its diagonal point and widens while its best
lies on an edge, up to its reach; the shared rate is not tuned again per row. A line under
the plane names every best that still lies on an edge of what was measured.
"""

import sdpa
from sdpa.language import RULE_LABELS, language_study, run_language
from sdpa.stats import paired

STUDY = language_study()


def plane(study):
    out = run_language(study)
    confirmed = [{"name": name, "label": RULE_LABELS.get(name, name), "loss": out.final(name),
                  "versus_best": paired(out.final(name), out.final("best"))}
                 for name in ("none", "inv_sqrt", "inv", "qk_norm", "best")]
    return {"lr": out.lr, "lrs": [10**e for e in out.rate_steps],
            "rate_loss": out.rate_loss.exp().tolist(),
            "grid": {p: loss.log().mean().exp().item() for p, loss in out.plane.items()},
            "windows": out.windows, "spread": {u: study.spread(u) for u in study.u_steps},
            "best": out.best, "row_best": out.row_best, "confirmed": confirmed,
            "on_edge": [u for u in study.u_steps if out.on_edge(u)]}


result = plane(STUDY)
r = result
columns = sorted({w for _, w in r["grid"]})


def cell(u, w):
    if (u, w) not in r["grid"]:
        return "·"
    mark = " ★" if (u, w) == r["best"] else " ←" if (u, w) == r["row_best"][u] else ""
    return f"{r['grid'][(u, w)]:.3f}{mark}"


print(sdpa.markdown_table(
    ["default", *[f"rate {lr:.2g}" for lr in r["lrs"]]],
    [(label, *[f"{x:.3f}" + (" ←" if lr == r["lr"] else "") for lr, x in zip(r["lrs"], row)])
     for label, row in zip(("no factor", "1/√d_k"), r["rate_loss"])],
    caption="Stage 1, the shared rate: both defaults at every rate, final held-out loss "
    f"(geometric mean over the choice seeds, {len(STUDY.choose_seeds)}); ← the rate chosen for "
    "both (the lowest mean log loss), used by every later run.",
))
print(sdpa.markdown_table(
    ["u (starting spread)", *[f"w = {w}" for w in columns]],
    [(f"{u} ({r['spread'][u]:.3g})", *[cell(u, w) for w in columns]) for u in STUDY.u_steps],
    caption="Stage 2, the plane at the shared rate: final held-out loss at every point "
    "measured (geometric mean over the choice seeds), without the factor. Rows: W_Q and W_K "
    "start d_k^(−u/4) times GPT-2's draw (in brackets the std of the unscaled logits at the "
    "start); columns: they learn at d_k^(−w/4) times the shared rate. No factor's default is "
    "(0, 0), 1/√d_k's (1, 1), 1/d_k's (2, 2). ← each row's best point, ★ the plane's best, "
    "· not measured.",
))


def edges(r):
    """Each best that lies on an edge of what was measured, a sentence each: the shared
    rate at an end of stage 1's window, a row's best w at an end of its row's window."""
    end = {min(r["lrs"]): "lowest", max(r["lrs"]): "highest"}
    found = [f"The shared rate {r['lr']:.2g} is the {end[r['lr']]} stage 1 measured."
             ] if r["lr"] in end else []
    for u in r["on_edge"]:
        (_, w), window = r["row_best"][u], r["windows"][u]
        side = "faster" if w == window[0] else "slower"
        found.append(f"Row {u}'s best, w = {w}, is the {side} end of its window "
                     f"(w = {window[0]} to {window[-1]}).")
    return found


at_edge = edges(r)
print("**Edges.** " + (" ".join(at_edge) + " Nothing beyond an edge was measured." if at_edge else
                       "Every best lies inside what was measured: the shared rate inside stage 1's "
                       "window, each row's best w inside its row's window.") + "\n")
print(sdpa.markdown_table(
    ["setting", "final held-out loss", "minus the best point's, paired"],
    [(c["label"], f"{c['loss'].mean():.3f} ± {c['loss'].std():.3f}", str(c["versus_best"]))
     for c in r["confirmed"]],
    caption=f"Stage 3 on {len(STUDY.confirm_seeds)} fresh seeds: every rule's default at the "
    "shared rate (QK-norm + 1/√d_k too) and the plane's best point. Mean ± std; differences "
    "paired by seed, with a 95% t interval, in nats per character. The verdict below compares "
    "the model with and without the factor at each starting spread.",
))
