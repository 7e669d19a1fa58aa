"""The QK-norm page's arms: the small GPT with and without the factor, QK-norm and a soft cap.

The page sweeps them over learning rates and seeds on the copy task (:mod:`sdpa.gpt`); the
sweep's sizes are in :mod:`sdpa.sizes`.
"""

from __future__ import annotations

from sdpa.attention import Scale
from sdpa.models import GPTConfig

#: The QK-norm page's arms (its sweep, of learning rates and seeds: :mod:`sdpa.sizes`).
QK_NORM_ARMS: dict[str, GPTConfig] = {
    "scaled": GPTConfig(),
    "unscaled": GPTConfig(scale=Scale.NONE),
    "qk_norm": GPTConfig(qk_norm="rms"),
    "qk_norm_unscaled": GPTConfig(qk_norm="rms", scale=Scale.NONE),
    "softcap": GPTConfig(softcap=10.0),
}
