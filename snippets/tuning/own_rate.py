"""The unscaled head given W_Q and W_K's own learning rate, against 1/sqrt(d_k) tuned.

``sizes().own_rate`` (``sdpa.studies.own_rate_tuning``) sweeps the unscaled head with W_Q
and W_K learning d_k^(-1/4) or d_k^(-1/2) times the shared rate, and the shared rate over a
window, on the sweep seeds; with the plain head of the tuning (multiplier 1) that makes
three candidates, and the one with the lowest sweep loss is reported on the same fresh
seeds as the tuned 1/sqrt(d_k) head, so the two are compared seed by seed. The block
(``sizes().block_own_rate``) is the 4-head block of the realistic-shape section.
"""

import sdpa
from sdpa.attention import Scale
from sdpa.sizes import sizes
from sdpa.studies import run_tuning
from sdpa.training import OPTIMIZER_LABELS


def mean_se(values):
    return values.mean().item(), values.std().item() / len(values) ** 0.5


SIZES = sizes()


def own_rate(pairs=((SIZES.own_rate, SIZES.tuning), (SIZES.block_own_rate, SIZES.block))):
    rows = []
    for own_tuning, shared_tuning in pairs:
        own, shared = run_tuning(own_tuning), run_tuning(shared_tuning)
        for (optimizer, d_k, _), tuned in own.items():
            plain = shared[(optimizer, d_k, Scale.NONE)]
            scaled = shared[(optimizer, d_k, Scale.INV_SQRT)]
            exponent = own_tuning.qk_rates[own_tuning.candidates(d_k, Scale.NONE).index(tuned.arm)]
            if plain.mean_loss.min() <= tuned.mean_loss.min():  # the sweep seeds prefer rate x 1
                tuned, exponent = plain, 0.0
            arm = tuned
            rows.append({
                "shape": "one head" if own_tuning.heads is None else f"{own_tuning.heads} heads",
                "optimizer": optimizer, "d_k": d_k, "exponent": exponent,
                "lr": arm.best_lr, "own": mean_se(arm.confirm_loss),
                "shared": mean_se(plain.confirm_loss), "scaled": mean_se(scaled.confirm_loss),
                "own_minus_scaled": mean_se(arm.confirm_loss - scaled.confirm_loss),
                "shared_minus_scaled": mean_se(plain.confirm_loss - scaled.confirm_loss),
            })
    return rows


result = own_rate()


def pm(pair):
    return f"{pair[0]:.3f} ± {pair[1]:.3f}"


def exponent(e):
    return "1" if e == 0 else f"d_k^({e:g})"


print(sdpa.markdown_table(
    ["model", "optimiser", "d_k", "W_Q, W_K rate ×", "shared rate",
     "no factor, own rate, minus 1/√d_k", "no factor, one rate, minus 1/√d_k"],
    [(r["shape"], OPTIMIZER_LABELS[r["optimizer"]], r["d_k"], exponent(r["exponent"]),
      f"{r['lr']:.3g}", pm(r["own_minus_scaled"]), pm(r["shared_minus_scaled"]))
     for r in result],
    align="llrlrrr",
    caption="Final loss minus the tuned 1/√d_k head's, mean ± standard error over the "
    f"{len(SIZES.tuning.confirm_seeds)} confirmation seeds (the same seeds for both heads: "
    "differences paired by seed). Own rate: "
    "the unscaled head with W_Q and W_K's rate multiplier and the shared rate both tuned; one "
    "rate: the tuned comparison above, every weight at one rate. The tuned 1/√d_k head's own "
    "losses are in the table above.",
))
