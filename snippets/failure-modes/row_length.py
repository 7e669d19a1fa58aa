"""Row length decides which row passes back the larger gradient: unscaled or scaled.

The survey's rows (``sdpa.survey``, unit-variance q and k) at d_k = 64 and 128, with 8 to
128 keys per row. Per row length and rule: the mean spectral norm of the softmax Jacobian
diag(p) - p p^T (its largest gain, ‖J‖₂), the median number of keys in play e^H and the
share of one-hot rows (largest weight above 0.99). A scaled row spreads its weight over
more keys the longer it is, and its spectral norm falls with it; an unscaled row keeps its
weight on its top one or two keys, and its spectral norm stays put.
"""

import sdpa
from sdpa import survey
from sdpa.attention import Scale

HEAD_DIMS = [64, 128]
ROW_LENGTHS = [8, 16, 32, 64, 128]
RULES = [Scale.NONE, Scale.INV_SQRT]


def row_stats(d_k, n, rule):
    rows = survey.rows(d_k, survey.factor(rule, d_k), n)
    return {"d_k": d_k, "n": n, "rule": rule, "spectral_norm": rows.spectral_norm.mean().item(),
            "spectral_norm_se": survey.standard_error(rows.spectral_norm),
            "effective_keys": rows.effective_keys.median().item(), "one_hot": rows.one_hot()}


result = [row_stats(d_k, n, rule) for d_k in HEAD_DIMS for n in ROW_LENGTHS for rule in RULES]
at = {(r["d_k"], r["n"], r["rule"]): r for r in result}

print(
    sdpa.markdown_table(
        ["d_k", "keys per row", "‖J‖₂, q·k", "‖J‖₂, q·k/√d_k", "keys in play, q·k",
         "keys in play, q·k/√d_k", "one-hot rows, q·k"],
        [(d_k, n, none["spectral_norm"], scaled["spectral_norm"], none["effective_keys"],
          scaled["effective_keys"], f"{none['one_hot']:.0%}")
         for d_k in HEAD_DIMS for n in ROW_LENGTHS
         for none, scaled in [(at[d_k, n, Scale.NONE], at[d_k, n, Scale.INV_SQRT])]],
        caption=f"{survey.N_ROWS:,} queries per row length, unit-variance q and k. ‖J‖₂: the mean "
        "spectral norm of the softmax Jacobian; keys in play: the median. No scaled row is "
        "one-hot.",
    )
)

short, long = at[128, 16, Scale.NONE]["one_hot"], at[128, 64, Scale.NONE]["one_hot"]
print(f"\nAt d_k = 128, {short:.0%} of unscaled rows of 16 keys start one-hot, against "
      f"{long:.0%} of rows of 64 keys.")
