"""The identity the plane rests on: the 1/sqrt(d_k) head and the unscaled head at its point
of the plane, trained from the same draw on the same batches, give the same losses.

Each pair runs through the plain loop (``sdpa.training.train``, in
``sdpa.plane.identity_runs``), at the plane's first shared rate, for the plane's budget.
Under Adam the unscaled head's W_Q and W_K get epsilon / sqrt(s). Bit for bit where
d_k^(1/4) is a power of two (every multiplication by it is exact), within float rounding
elsewhere.
"""

import torch

import sdpa
from sdpa.attention import Scale
from sdpa.plane import identity_runs, rule_step
from sdpa.sizes import sizes
from sdpa.training import OPTIMIZER_LABELS

PLANE = sizes().plane
#: bit for bit at 16 (its fourth root is 2), to float rounding at 64
D_KS = (16, 64)


def identity(plane):
    rows = []
    for optimizer in plane.optimizers:
        for d_k in D_KS:
            for rule in (Scale.INV_SQRT,):
                runs = identity_runs(plane, optimizer, d_k, rule)
                scaled, unscaled = (torch.tensor(x) for x in runs)
                rows.append({"optimizer": optimizer, "d_k": d_k, "rule": rule,
                             "point": rule_step(rule, optimizer), "steps": len(scaled),
                             "largest_gap": (scaled - unscaled).abs().max().item(),
                             "identical": torch.equal(scaled, unscaled),
                             "final": scaled[-1].item()})
    return rows


result = identity(PLANE)

print(sdpa.markdown_table(
    ["optimiser", "d_k", "rule", "its point (u, w)", "largest loss difference over the run",
     "bit for bit"],
    [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], r["rule"].label, f"{r['point']}",
      f"{r['largest_gap']:.1e}", "yes" if r["identical"] else "no")
     for r in result],
    align="lrlrrl",
    caption=f"Each rule against the unscaled head at its point of the plane, {PLANE.steps} "
    "steps from the same draw and batches, seed 0: the largest difference between the two "
    "runs' losses at any step (nats).",
))
