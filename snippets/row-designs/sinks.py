"""What a sink logit does to a row at initialisation, with and without the factor.

gpt-oss appends one learned logit per head to every row, after the 1/sqrt(d_k) scale,
and drops its weight after the softmax. A row's keys then share 1 / (1 + exp(z0 - lse(z)))
of the weight, where z0 is the sink logit and lse(z) the row's logsumexp; their ratios do
not change. So the sink absorbs half a row's weight exactly when z0 = lse(z), and lse(z)
depends on how wide the logits are. We read the site's survey of rows (64 keys,
unit-variance q and k).
"""

import math

import torch

import sdpa
from sdpa import survey
from sdpa.attention import Scale, entropy
from sdpa.variants import sink_softmax

SINKS = [0.0, 4.0, 8.0]
DIMS = [64, 128]


def with_sinks(dims=DIMS, sinks=SINKS):
    out = []
    for d_k in dims:
        for rule in (Scale.INV_SQRT, Scale.NONE):
            rows = survey.rows(d_k, survey.factor(rule, d_k))
            z = rows.z
            lse = torch.logsumexp(z, dim=-1)
            r = {"d_k": d_k, "rule": rule, "half_sink_median": lse.median().item(),
                 "half_sink_q10": lse.quantile(0.1).item(),
                 "half_sink_q90": lse.quantile(0.9).item(),
                 "half_sink_se": survey.standard_error(lse, torch.median),
                 "entropy": rows.entropy.mean().item(), "ratio_error": 0.0}
            for z0 in sinks:
                p = sink_softmax(z, z0)
                kept = p.sum(-1)
                full = torch.cat([p, (1 - kept)[:, None]], dim=-1)  # keys and sink, summing to 1
                ratios = (p / kept[:, None] - rows.p).abs().max().item()
                r["ratio_error"] = max(r["ratio_error"], ratios)
                r[f"sink_share_{z0:g}"] = (1 - kept).mean().item()
                r[f"entropy_{z0:g}"] = entropy(full).mean().item()
            out.append(r)
    return out


result = with_sinks()

print(
    sdpa.markdown_table(
        ["d_k", "factor", "sink logit taking half: median (10%–90%)",
         "sink's share at z₀ = " + " / ".join(f"{z0:g}" for z0 in SINKS), "entropy, no sink",
         "entropy at z₀ = " + " / ".join(f"{z0:g}" for z0 in SINKS)],
        [(r["d_k"], r["rule"].label,
          f"{r['half_sink_median']:.2f} ({r['half_sink_q10']:.1f}–{r['half_sink_q90']:.1f})",
          " / ".join(f"{r[f'sink_share_{s:g}']:.1%}" for s in SINKS), r["entropy"],
          " / ".join(sdpa.fmt(r[f"entropy_{s:g}"]) for s in SINKS)) for r in result],
        align="rlrrrr",
        caption=f"{survey.N_ROWS} rows of 64 keys per line. The sink logit taking half is the "
        "row's logsumexp. Shares are means over rows; entropies (nats) are over the keys and "
        f"the sink together, means over rows; log 64 = {math.log(64):.2f} for a uniform row.",
    )
)
