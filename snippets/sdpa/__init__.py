"""The science library every snippet on the site shares, one module per idea.

* ``sdpa.attention``: scores and their scale rules, softmax statistics (entropy, the
  Jacobian), the soft cap and QK-norm;
* ``sdpa.tasks``: the data (associative recall, copy, planted scores);
* ``sdpa.models``: the recall models (one head, one block) and the small GPT, as
  ``nn.Module``s;
* ``sdpa.training``: the plain training loop on ``torch.optim`` (``train``), and the
  ensemble that trains many runs as one;
* ``sdpa.recall`` and ``sdpa.gpt``: the two engines, frozen configurations of many runs
  with typed, memoised results; the studies built on them, one module per page:
  ``sdpa.ablation`` (failure modes), ``sdpa.plane`` (the W_Q/W_K plane and the starting
  spread), ``sdpa.tuning`` (budgets, a learned scale), ``sdpa.transfer``,
  ``sdpa.temperature``, ``sdpa.qk_norm`` and ``sdpa.language``, sized in ``sdpa.sizes``;
  ``sdpa.stats``: means and paired t intervals; ``sdpa.plots``: the drawing they share;
* ``sdpa.survey``: attention at initialisation, measured once;
* ``sdpa.variants``: what other models change in attention (causal masks, sink logits,
  differential attention, rotary embeddings, YaRN's mscale);
* ``sdpa.runtime``: device, profile, seeds, threads and the memo; ``sdpa.figures``: the
  ``Figure`` (its SVG in ``sdpa.svg``, its phone layout in ``sdpa.phone``, the CSV of what
  it plots in ``sdpa.plotted``) and ``sdpa.explorable`` for a figure the reader drives;
  ``sdpa.tables``: Markdown tables; ``sdpa.env`` and ``sdpa.style``: the environment and
  the figures' colours and markup, in modules that import neither torch nor matplotlib
  (the build reads them).

The names below are the ones snippets use most (``sdpa.seed``, ``sdpa.Figure``, ...).
They load their module on first use, as ``sdpa.figures`` (any module of the package)
loads itself, so ``import sdpa.env`` or ``import sdpa.style`` costs no torch import.
"""

from importlib import import_module

_HOMES = {
    "device": "sdpa.runtime", "generator": "sdpa.runtime", "seed": "sdpa.runtime",
    "seeded": "sdpa.runtime", "profile": "sdpa.runtime",
    "Figure": "sdpa.figures", "INK": "sdpa.style", "PALETTE": "sdpa.style",
    "markdown_table": "sdpa.tables", "fmt": "sdpa.tables",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    """A name of ``_HOMES`` from its module, or a module of the package (``sdpa.figures``),
    loaded on first use."""
    if name in _HOMES:
        value = getattr(import_module(_HOMES[name]), name)
    else:
        try:
            value = None if name.startswith("_") else import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            value = None
        if value is None:
            raise AttributeError(f"module 'sdpa' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
