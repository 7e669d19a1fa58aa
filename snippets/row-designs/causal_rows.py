"""Saturation and keys in play by position in a causal head, at initialisation.

Row i of a causal head (position i, counting from 1) holds i keys, not the fixed 64 of the
site's survey. We draw sequences of 256 tokens with unit-variance q and k components,
mask the future, and measure per position the share of one-hot rows (largest weight above
0.99) and the median number of keys in play (e^entropy), for d_k = 64 and 128, without
the factor and with 1/sqrt(d_k).
"""

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale, random_qk, scores
from sdpa.variants import causal

generator = sdpa.seed(31)
N_POSITIONS, N_SEQUENCES = 256, 64
#: The early positions' shares rest on few sequences (the rows of one sequence share their
#: first keys), so the ranges up to position 16 are measured on many short sequences too.
SHORT, N_SHORT = 16, 1024
DIMS = [64, 128]
RULES = [Scale.NONE, Scale.INV_SQRT]
BINS = [(1, 1), (2, 4), (5, 16), (17, 64), (65, 256)]


def causal_scores(n_sequences, n_positions, d_k, generator):
    pairs = [random_qk(n_positions, n_positions, d_k, generator, device=sdpa.device())
             for _ in range(n_sequences)]
    return torch.stack([scores(q, k) for q, k in pairs]).cpu()  # (sequences, i, j)


def by_position(generator):
    curves = {}
    for d_k in DIMS:
        raw = causal_scores(N_SEQUENCES, N_POSITIONS, d_k, generator)
        short = causal_scores(N_SHORT, SHORT, d_k, generator)
        for rule in RULES:
            one_hot, keys = {}, {}
            for name, z in (("long", raw), ("short", short)):
                rows = survey.Rows(causal(z * rule.factor(d_k)))
                one_hot[name] = (rows.max_weight > survey.ONE_HOT).double()  # (sequences, i)
                keys[name] = rows.effective_keys
            bins = []
            for a, b in BINS:
                which = "short" if b <= SHORT else "long"
                hot, k = one_hot[which][:, a - 1:b], keys[which][:, a - 1:b]
                bins.append({"first": a, "last": b, "one_hot": hot.mean().item(),
                             "effective_keys": k.median().item(),
                             "keys_share": (k / torch.arange(a, b + 1)).median().item()})
            curves[d_k, rule] = {"one_hot": one_hot["long"].mean(0).tolist(),
                                 "effective_keys": keys["long"].median(0).values.tolist(),
                                 "bins": bins}
    return curves


result = by_position(generator)
#: The positions drawn: about 40, evenly spaced on the log axis.
shown = sorted({round(N_POSITIONS ** (i / 39)) for i in range(40)})

figure = sdpa.Figure(
    "field-causal-rows",
    caption="Left: the share of one-hot rows (largest weight above 0.99) at each position of "
    f"a causal head, over {N_SEQUENCES} sequences. Right: the median number of keys in play; "
    "the dotted line is every visible key. The first row is one-hot whatever the scale, "
    "since it holds one key; unscaled rows stay few-key at every position, and scaled rows "
    "keep a steady share of their keys.",
    alt="Two panels against the position in the sequence, 1 to 256, log scale. One-hot share: "
    "unscaled curves start at 100% and fall slowly to about 15-30%; scaled curves drop from "
    "100% at position 1 to about zero by position 2. Keys in play: scaled curves rise in "
    "proportion to the position, unscaled curves stay between one and two keys.",
    ncols=2,
    size=(7.6, 3.1),
)
with figure as (left, right):
    styles = {(64, Scale.NONE): "-", (128, Scale.NONE): "--", (64, Scale.INV_SQRT): "-",
              (128, Scale.INV_SQRT): "--"}
    colors = {Scale.NONE: sdpa.PALETTE[0], Scale.INV_SQRT: sdpa.PALETTE[1]}
    for (d_k, rule), curve in result.items():
        label = f"{rule.label}, d_k = {d_k}"
        kw = {"color": colors[rule], "ls": styles[d_k, rule], "lw": 1.3, "label": label}
        left.plot(shown, [100 * curve["one_hot"][i - 1] for i in shown], **kw)
        right.plot(shown, [curve["effective_keys"][i - 1] for i in shown], **kw)
    right.plot(shown, shown, color=sdpa.INK, ls=":", lw=1, label="all visible keys")
    left.set(xscale="log", xlabel="position i (keys in the row)", ylabel="one-hot rows (%)")
    right.set(xscale="log", yscale="log", xlabel="position i (keys in the row)",
              ylabel="keys in play, median e^H")
    for ax in (left, right):
        ax.set_xticks([1, 4, 16, 64, 256], ["1", "4", "16", "64", "256"])
        ax.minorticks_off()
    right.set_yticks([1, 4, 16, 64, 256], ["1", "4", "16", "64", "256"])
    left.legend(fontsize=7)
print(figure.html)

print(
    sdpa.markdown_table(
        ["positions", *(f"{rule.label}, d_k = {d}: one-hot / keys in play"
                        for d in DIMS for rule in RULES)],
        [(f"{b['first']}–{b['last']}" if b["first"] != b["last"] else str(b["first"]),
          *(f"{c['bins'][i]['one_hot']:.0%} / {c['bins'][i]['effective_keys']:.1f}"
            for c in (result[d, rule] for d in DIMS for rule in RULES)))
         for i, b in enumerate(result[DIMS[0], RULES[0]]["bins"])],
        align="lrrrr",
        caption=f"Share of one-hot rows and median keys in play over the positions of each "
        f"range: {N_SEQUENCES} sequences of {N_POSITIONS} tokens, and for the ranges up to "
        f"position {SHORT} {N_SHORT} sequences of {SHORT}.",
    )
)

# The survey's rows of 64 keys are position 64 alone: the same head, one position.
survey_64 = {d_k: survey.rows(d_k, survey.factor(Scale.NONE, d_k), 64).one_hot() for d_k in DIMS}
none_64 = result[64, Scale.NONE]["bins"]
print(
    f"\nUnscaled at d_k = 64 the one-hot share falls from {none_64[1]['one_hot']:.0%} at "
    f"positions 2–4 to {none_64[3]['one_hot']:.0%} over 17–64 and {none_64[4]['one_hot']:.0%} "
    f"over 65–256. The survey's rows of 64 keys, which are position 64 alone, give "
    f"{survey_64[64]:.1%} at d_k = 64 and {survey_64[128]:.1%} at d_k = 128, against "
    f"{none_64[2]['one_hot']:.0%} and {result[128, Scale.NONE]['bins'][2]['one_hot']:.0%} over "
    "positions 5–16.\n"
)
