"""The identity the plane rests on: the 1/sqrt(d_k) head and the unscaled head at its point
of the plane, trained from the same draw on the same batches, give the same losses, at
every shared rate of the plane's window; and global-norm gradient clipping breaks it
whenever the clip binds.

Each pair runs through the plain loop (``sdpa.training.train``, in
``sdpa.plane.identity_runs``) for the plane's budget. Under Adam the unscaled head's W_Q and
W_K get epsilon / sqrt(c). Bit for bit where d_k^(1/4) is a power of two (every
multiplication by it is exact), within float rounding elsewhere. Clipping the global
gradient norm before each step (as Wortsman et al. 2023 train) scales each head's
step by its own norm, so the two runs part wherever a norm exceeds the clip.
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
#: a clip that binds at the site's rates, and one that never does (at the exact d_k)
CLIPS, CLIP_D_K = (1.0, 100.0), 16


def compared(scaled, unscaled):
    """The largest difference of two loss curves, and whether they are bit for bit the same: a
    run that diverges in both to the same NaN or infinity agrees there; in one only, it differs
    infinitely."""
    scaled, unscaled = torch.tensor(scaled), torch.tensor(unscaled)
    agree = (scaled == unscaled) | (scaled.isnan() & unscaled.isnan())
    apart = (scaled - unscaled).abs().nan_to_num(nan=float("inf"))
    difference = torch.where(agree, 0.0, apart).max().item()
    return difference, difference == 0


def identity(plane, rule=Scale.INV_SQRT):
    rows = []
    for optimizer in plane.optimizers:
        for d_k in D_KS:
            runs = [compared(*identity_runs(plane, optimizer, d_k, rule, lr=lr))
                    for lr in plane.lrs(optimizer)]
            rows.append({"optimizer": optimizer, "d_k": d_k, "rule": rule,
                         "point": rule_step(rule, optimizer), "rates": len(runs),
                         "lowest_rate_difference": runs[0][0],
                         "largest_difference": max(difference for difference, _ in runs),
                         "identical": all(same for _, same in runs)})
    return rows


def clipped(plane, rule=Scale.INV_SQRT):
    rows = []
    for optimizer in plane.optimizers:
        for clip in CLIPS:
            norms = []
            runs = identity_runs(plane, optimizer, CLIP_D_K, rule, clip=clip, norms=norms)
            difference, same = compared(*runs)
            rows.append({"optimizer": optimizer, "clip": clip, "largest_difference": difference,
                         "identical": same, "binds": sum(n > clip for n in norms),
                         "steps": len(norms), "largest_norm": max(norms)})
    return rows


result = {"rates": identity(PLANE), "clipped": clipped(PLANE)}

print(sdpa.markdown_table(
    ["optimiser", "d_k", "rule", "its point (u, w)", "shared rates",
     "largest loss difference: lowest rate", "any rate", "bit for bit at every rate"],
    [(OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], r["rule"].label, f"{r['point']}", r["rates"],
      f"{r['lowest_rate_difference']:.1e}", f"{r['largest_difference']:.1e}",
      "yes" if r["identical"] else "no")
     for r in result["rates"]],
    align="lrlrrrrl",
    caption=f"The rule against the unscaled head at its point, {PLANE.steps} steps from one "
    "draw and the same batches (seed 0), at every shared rate of the window: the largest "
    "loss difference at any step (nats).",
))


def clip_words(r):
    label = OPTIMIZER_LABELS[r["optimizer"]]
    if r["binds"]:
        return (f"{label}, at norm {r['clip']:g}: binds at {r['binds']} of {r['steps']} steps, "
                f"the runs part by up to {r['largest_difference']:.2g} nats")
    return (f"{label}, at norm {r['clip']:g}: never binds (largest norm "
            f"{r['largest_norm']:.2g}), " + ("bit for bit" if r["identical"]
                                              else f"within {r['largest_difference']:.1e} nats"))


print(f"Global-norm clipping before each step (d_k = {CLIP_D_K}, the first rate): "
      + "; ".join(map(clip_words, result["clipped"])) + ".\n")
