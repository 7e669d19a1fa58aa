"""The plane in a realistic shape: 4 heads in one pre-LayerNorm block with a residual stream
(d_model = 4 d_k), on the same recall task, each query attending to the pairs only.

The same protocol as the one-head plane (``sdpa.plane.run_plane``): every point at every
shared rate on the choice seeds, each rule's default and the best point rerun on fresh
seeds. Where a head size's whole grid was measured, its plane is drawn. The list under the
table reads the block without the factor against the scaled block.
"""

import sdpa
from sdpa.plane import run_plane, settings_table
from sdpa.plots import draw_planes
from sdpa.sizes import sizes
from sdpa.tuning import unscaled_reading

PLANE = sizes().block_plane

result = run_plane(PLANE)
print(settings_table(PLANE, result))

if PLANE.grid_d_ks:
    figure = sdpa.Figure(
        "block-plane",
        caption=f"The W_Q/W_K plane of a block of {PLANE.heads} heads without the factor, "
        f"as the one-head plane above: final loss after {PLANE.steps} steps at each point's "
        "best shared rate (geometric mean over the choice seeds); outlined markers: the "
        "rules' defaults; star: the best point.",
        alt="Heat maps of the block's final loss over the W_Q/W_K plane, one panel per "
        "optimiser and head size, with the rules' defaults marked.",
        nrows=len(PLANE.optimizers), ncols=len(PLANE.grid_d_ks),
        size=(3.4 * len(PLANE.grid_d_ks) + 1.2, 3.0 * len(PLANE.optimizers) + 0.8),
        )
    with figure as axes:
        draw_planes(axes, PLANE, result)
    print(figure.html)

print(unscaled_reading(PLANE))
