"""The softmax Jacobian against the logit scale: small when flat, small when one-hot.

Rows of N_KEYS logits, each a standard-normal draw times the logits' standard deviation, from
0.01 to 30. For each standard deviation: the mean spectral norm and the mean trace of
J = diag(p) - p p^T. The markers are the rows of ``sdpa.survey`` (the rows the saturation
table measures), placed at their logit standard deviation: scaled (about 1 at any d_k),
unscaled with unit-variance q and k (about sqrt(d_k)), and unscaled with PyTorch's default
nn.Linear initialisation (about sqrt(d_k)/3).
"""

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale, jacobian_spectral_norm, jacobian_trace

generator = sdpa.seed(4)
N_KEYS, N_ROWS = 64, 128
LOGIT_STDS = torch.logspace(-2, 1.5, 29).tolist()
#: (d_k, scale rule, initialisation) of the survey rows to mark
MARKED = [(128, Scale.INV_SQRT, "unit")] + [
    (d_k, Scale.NONE, init) for d_k in (64, 128) for init in ("unit", "default")
]


def jacobian_curve(generator, stds):
    g = torch.randn(N_ROWS, N_KEYS, generator=generator, dtype=torch.float64).to(sdpa.device())
    rows = []
    for s in stds:
        p = torch.softmax(s * g, dim=-1)
        rows.append({"std": s, "spectral_norm": jacobian_spectral_norm(p).mean().item(),
                     "trace": jacobian_trace(p).mean().item()})
    return rows


def marked(d_k, rule, init):
    rows = survey.rows(d_k, survey.factor(rule, d_k, init), N_KEYS)
    return {"d_k": d_k, "rule": rule, "init": init, "std": rows.z.std().item(),
            "spectral_norm": rows.spectral_norm.mean().item(), "trace": rows.trace.mean().item()}


def label(r):
    if r["rule"] is Scale.NONE:
        return f"unscaled, {r['init']} init, d_k = {r['d_k']}"
    return f"scaled, d_k = {r['d_k']}"


result = {"curve": jacobian_curve(generator, LOGIT_STDS),
          "marked": [marked(*arm) for arm in MARKED]}

print(
    sdpa.markdown_table(
        ["row", "logit std", "spectral norm of J", "trace of J"],
        [(label(r), r["std"], r["spectral_norm"], r["trace"]) for r in result["marked"]],
        caption=f"Mean over the survey's {survey.N_ROWS:,} rows of {N_KEYS} keys (the saturation "
        f"table's rows). A uniform row has spectral norm 1/{N_KEYS} ≈ {1 / N_KEYS:.3f}; the "
        "largest possible is 1/2.",
    )
)

figure = sdpa.Figure(
    "failure-modes-jacobian",
    caption=f"Spectral norm and trace of the softmax Jacobian for rows of {N_KEYS} keys, against "
    "the standard deviation of the logits. The spectral norm peaks where two or three keys "
    "compete (dotted: its ceiling 1/2); the trace falls steadily. Markers: where scaled and "
    "unscaled rows of real heads start.",
    alt="Two curves against logit scale: the trace starts near 1 and falls as the scale grows; "
    "the spectral norm starts near zero, peaks at a few units and falls again; markers show the "
    "scaled rows at scale 1 and the unscaled rows at larger scales.",
    size=(6.2, 3.6),
)
with figure as ax:
    curve = result["curve"]
    stds = [r["std"] for r in curve]
    ax.plot(stds, [r["spectral_norm"] for r in curve], color=sdpa.PALETTE[0], label="spectral norm")
    ax.plot(stds, [r["trace"] for r in curve], color=sdpa.PALETTE[1], label="trace")
    ax.axhline(0.5, color=sdpa.INK, ls=":", lw=1, label="two-way tie, 1/2")
    ax.axhline(1 / N_KEYS, color=sdpa.INK, ls="--", lw=0.8, label=f"uniform, 1/{N_KEYS}")
    for r, color, marker in zip(result["marked"], sdpa.PALETTE[2:], "osD^v"):
        ax.plot([r["std"]], [r["spectral_norm"]], marker, color=color, ms=7, label=label(r))
        ax.plot([r["std"]], [r["trace"]], marker, color=color, ms=7)
    ax.set(xscale="log", xlabel="standard deviation of the logits", ylabel="size of J",
           ylim=(0, 1.0))
    ax.legend(fontsize=7, loc="upper left")
print(figure.html)
