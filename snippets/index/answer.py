"""The answer in one figure: what the factor does to a row of attention at initialisation.

The survey's rows of 64 keys (``sdpa.survey``: q and k with independent unit-variance
components, the textbook model; the failure-modes page measures them in full). Left: at
d_k = 64, the weights of one row sorted from the largest, for each scale rule: the row
whose unscaled keys in play (e^entropy) is the median of the survey, so neither a lucky
nor an unlucky one. Right: the median keys in play against d_k for each rule. Below, the
same rows of a head 64 wide without the factor under three initialisations: how wide their
logits start depends on the weights' scale, and with it how peaked the rows are.
"""

import sdpa
from sdpa import survey
from sdpa.attention import Scale
from sdpa.language import logit_spread

N_KEYS, SHOWN_D_K = 64, 64
HEAD_DIMS = [8, 16, 32, 64, 128, 256, 512]
RULES = [Scale.NONE, Scale.INV_SQRT, Scale.INV]
LABELS = {Scale.NONE: "no factor", Scale.INV_SQRT: "1/√d_k", Scale.INV: "1/d_k"}


def rows(rule, d_k):
    return survey.rows(d_k, survey.factor(rule, d_k), N_KEYS)


def median_row(d_k):
    """The index of the row whose unscaled keys in play is the median."""
    keys = rows(Scale.NONE, d_k).effective_keys
    return int((keys - keys.median()).abs().argmin())


def answer(d_k=SHOWN_D_K):
    i = median_row(d_k)
    weights = {rule: rows(rule, d_k).p[i].sort(descending=True).values.tolist() for rule in RULES}
    keys = {rule: [rows(rule, d).effective_keys.median().item() for d in HEAD_DIMS]
            for rule in RULES}
    return {"d_k": d_k, "row": i, "weights": weights, "keys_in_play": keys,
            "row_keys": {rule: rows(rule, d_k).effective_keys[i].item() for rule in RULES}}


#: Unscaled logits' spread at d_k = 64 under three initialisations: unit-variance q and k,
#: PyTorch's nn.Linear default (components of variance 1/3), GPT-2's 0.02 at d_model 128.
STARTS = {"unit variance": 8.0, "PyTorch's nn.Linear default": 8.0 / 3,
          "GPT-2's 0.02, d_model 128": logit_spread(128, 64)}


def starts(d_k=SHOWN_D_K):
    """Keys in play (median) and the share of one-hot rows, unscaled, per initialisation."""
    out = {}
    for name, spread in STARTS.items():
        r = survey.rows(d_k, spread / d_k**0.5, N_KEYS)  # unit-variance q.k has std sqrt(d_k)
        out[name] = {"spread": spread, "keys": r.effective_keys.median().item(),
                     "one_hot": r.one_hot()}
    return out


result = answer()
result["starts"] = starts()

figure = sdpa.Figure(
    "home-answer", ncols=2, size=(7.6, 3.1),
    caption=f"Unit-variance q and k. Left: one row of {N_KEYS} keys at d_k = {SHOWN_D_K} (the "
    "survey's median row, unscaled), its weights sorted (log scale). Without the factor two "
    "keys hold most of the weight, more than four fifths; with 1/√d_k it "
    "is spread over many keys. Right: the median keys in play against d_k: unscaled rows lose "
    "keys as heads widen, scaled rows start alike at every width, rows divided by d_k drift "
    "towards uniform.",
    alt="Two panels. Left: sorted attention weights of one row, log scale: the unscaled curve "
    "drops from near one to far below a millionth across the row, the 1/sqrt(d_k) curve falls "
    "gently, the 1/d_k curve is nearly flat at 1/64. Right: keys in play against head "
    "dimension: unscaled falls towards one, 1/sqrt(d_k) is flat near 40, 1/d_k rises to 64.",
)
with figure as (left, right):
    ranks = list(range(1, N_KEYS + 1))
    for rule, color, style in zip(RULES, sdpa.PALETTE, ["o-", "s--", "^:"]):
        left.plot(ranks, result["weights"][rule], style, color=color, ms=2.5, label=LABELS[rule])
        right.plot(HEAD_DIMS, result["keys_in_play"][rule], style, color=color, label=LABELS[rule])
    left.axhline(1 / N_KEYS, color=sdpa.INK, ls=":", lw=1, label=f"uniform, 1/{N_KEYS}")
    left.set(yscale="log", ylim=(1e-12, 1.5), xlabel="key, by rank in the row",
             ylabel="attention weight")
    right.axhline(N_KEYS, color=sdpa.INK, ls=":", lw=1)
    right.set(xscale="log", yscale="log", xlabel="head dimension d_k",
              ylabel="keys in play, median e^H")
    right.set_xticks(HEAD_DIMS, [str(d) for d in HEAD_DIMS])
    right.minorticks_off()
    left.legend(fontsize=7, loc="lower left")
print(figure.html)

print(sdpa.markdown_table(
    ["initialisation, no factor", "std of q·k at the start", f"keys in play of {N_KEYS} (median)",
     "rows one-hot"],
    [(name, r["spread"], r["keys"], f"{100 * r['one_hot']:.1f}%")
     for name, r in result["starts"].items()],
    caption=f"The same rows at d_k = {SHOWN_D_K} without the factor, their logits at the spread "
    "each initialisation gives: the narrower the start, the less peaked the rows (one-hot: a "
    "largest weight above 0.99).",
))
