"""The W_Q/W_K plane of the one-head recall task: the final loss at every point, each at its
best shared rate, with every rule's default and the plane's best point marked.

Every point is the unscaled head with W_Q and W_K started d_k^(-u/4) times their
unit-variance draw and learning at d_k^(-w/4) times the shared rate (``sdpa.plane``); by the
equivalence each rule's default is one of these points. Squares: the geometric mean over
the choice seeds of the final loss at the point's best shared rate.
"""

import sdpa
from sdpa.plots import draw_planes
from sdpa.plane import run_plane
from sdpa.sizes import sizes

PLANE = sizes().plane

result = run_plane(PLANE)  # {(optimiser, d_k): PlaneResult}
n_choose = len(PLANE.choose_seeds)

figure = sdpa.Figure(
    "plane",
    caption=f"Final loss after {PLANE.steps} steps over the W_Q/W_K plane (u right, w up), "
    f"each square the geometric mean over {n_choose} choice seeds at its best of "
    f"{PLANE.rates} shared rates. Markers: each rule's default (circle: no factor; triangle: "
    "1/√d_k; square: 1/d_k); star: the choice seeds' best point.",
    alt="Heat maps of final loss over a grid of W_Q/W_K initial scale against their rate "
    "multiplier, one panel per optimiser and head size, with each rule's default and the "
    "best point marked.",
    nrows=len(PLANE.optimizers),
    ncols=len(PLANE.grid_d_ks),
    size=(3.4 * len(PLANE.grid_d_ks) + 1.2, 3.0 * len(PLANE.optimizers) + 0.8),
)
with figure as axes:
    draw_planes(axes, PLANE, result)
print(figure.html)
