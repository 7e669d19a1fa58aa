"""The science library every snippet on the site shares, one module per idea.

* ``sdpa.attention``: scores and their scale rules, softmax statistics (entropy, the
  Jacobian), the soft cap and QK-norm;
* ``sdpa.tasks``: the data (associative recall, copy, planted scores);
* ``sdpa.models``: the one-head recall model and the small GPT, as ``nn.Module``s;
* ``sdpa.training``: ``torch.optim`` and the ensemble that trains many runs as one;
* ``sdpa.experiments``: the pages' experiments, frozen configurations with typed results;
* ``sdpa.runtime``, ``sdpa.figures``, ``sdpa.tables``: device and seeds, SVG figures,
  Markdown tables (the names below are the ones snippets use most).
"""

from sdpa.runtime import device, generator, seed, seeded
from sdpa.figures import INK, PALETTE, Figure, svg_figure
from sdpa.tables import markdown_table, fmt

__all__ = ["device", "generator", "seed", "seeded", "Figure", "svg_figure", "INK", "PALETTE",
           "markdown_table", "fmt"]
