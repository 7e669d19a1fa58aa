"""Were the windows wide enough? Each rule's chosen candidate at every rate of the window,
on the confirmation seeds, and how much worse each edge is than the chosen rate, in
standard errors of the paired difference.

A window is wide enough when both edges are worse than the chosen rate by more than two
standard errors; a rate at the edge would mean the best lies outside.
"""

import sdpa
from sdpa.language import language_study, mean_se, run_language


def windows(study=None):
    study = study or language_study()
    tuned = run_language(study)
    rows = []
    for name, r in tuned.items():
        at = study.lrs.index(r.lr)
        edges = {}
        for side, i in (("low", 0), ("high", len(study.lrs) - 1)):
            gap, se = mean_se(r.window_loss[i] - r.window_loss[at])
            edges[side] = {"gap": gap, "se": se, "ratio": gap / se if se > 0 else 0.0}
        rows.append({"rule": name, "label": r.label, "lr": r.lr,
                     "loss": r.window_loss.mean(-1).tolist(), "edges": edges,
                     "candidates": [c.qk_lr for c in study.rules[name]],
                     "choose": r.choose_loss.tolist()})
    return {"lrs": list(study.lrs), "rows": rows}


result = windows()


def edge(e):
    return f"{e['gap']:+.3f} ({e['ratio']:.1f} SE)"


print(sdpa.markdown_table(
    ["rule", *[f"rate {lr:.2g}" for lr in result["lrs"]], "lowest rate's excess",
     "highest rate's excess"],
    [(r["label"], *[f"{x:.3f}" + (" ←" if lr == r["lr"] else "")
                    for lr, x in zip(result["lrs"], r["loss"])],
      edge(r["edges"]["low"]), edge(r["edges"]["high"])) for r in result["rows"]],
    caption="Final held-out loss of each rule's chosen candidate at every rate of the window "
    "(mean over the confirmation seeds; ← the rate the choice seeds picked). The last columns: "
    "each edge minus the chosen rate, paired by seed, and that excess in standard errors.",
))
