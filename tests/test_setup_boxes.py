"""Every page's setup boxes read against ``sdpa.sizes``: a sentence in a collapsed box that
states a size (a number of shared rates, seeds, points or spreads, or what a build
measures) must be one of the sentences below, each written from the sizes the profiles
really run. A grid, a seed count or a rate count changed in code and not in prose (the
transfer page once said seven shared rates where the plane ran eight) fails here, and so
does a new size sentence that no expectation reads.
"""

from __future__ import annotations

import re

import pytest

from sdpa import language
from sdpa.sizes import SIZES

from harness import DOCS

NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
           8: "eight", 9: "nine", 10: "ten"}
#: A sentence that states a size: a number (in words or digits) before one of these nouns.
SIZE = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|\d+) "
                  r"(?:shared rates|rates|choice seeds|fresh seeds|seeds|points|spreads)\b|"
                  r"\b(?:full|quick) build (?:measures|trains)\b")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\-\"])|\s+-\s+(?=[A-Z])")


def n(value: int) -> str:
    return NUMBERS.get(value, str(value))


def span(values) -> str:
    low, high = min(values), max(values)
    return f"{low}" if low >= 0 else f"${low}$", f"{high}"


def expected() -> dict[str, list[str]]:
    """Each page's size sentences, written from the sizes."""
    quick, full = SIZES["quick"], SIZES["full"]
    plane, block, qplane, qblock = full.plane, full.block_plane, quick.plane, quick.block_plane
    us, (adam_ws, sgd_ws) = plane.u_steps, (dict(plane.w_steps)[o] for o in ("adam", "sgd"))
    block_ws = dict(block.w_steps)
    (a_lo, a_hi), (s_lo, s_hi) = span(adam_ws), span(sgd_ws)
    lm = language.SIZES["full"]
    temperature = quick.temperature.experiment(quick.temperature.main_d_k)
    assert temperature.lrs == (1e-2,) and temperature.optimizer == "adam"
    assert quick.temperature.seeds == full.temperature.seeds  # "on five seeds", in both builds
    return {
        "tuning.md": [
            rf"The full build measures ${len(us)} \times {len(adam_ws)}$ points under each "
            f"optimiser: $u$ from {us[0]} to {us[-1]}, $w$ from {a_lo} to {a_hi} under Adam and "
            f"{s_lo} to {s_hi} under SGD.",
            f"It runs {n(plane.rates)} shared rates spaced by $10^{{1/{plane.per_decade}}}$, on "
            f"{n(len(plane.choose_seeds))} choice seeds, at $d_k = {plane.d_ks[0]}$, "
            f"{plane.d_ks[1]} and {plane.d_ks[2]}, and confirms on {n(len(plane.confirm_seeds))} "
            "fresh seeds.",
            rf"The quick build measures ${len(qplane.u_steps)} \times {len(dict(qplane.w_steps)['adam'])}$ "
            f"points through the rules' defaults at $d_k = {qplane.grid_d_ks[0]}$ alone, at "
            f"{n(qplane.rates)} rates on {n(len(qplane.choose_seeds))} seeds, and confirms on "
            f"{n(len(qplane.confirm_seeds))}.",
            rf"The full build measures ${len(block.u_steps)} \times {len(block_ws['adam'])}$ points "
            rf"under Adam and ${len(block.u_steps)} \times {len(block_ws['sgd'])}$ under SGD at "
            f"$d_k = {block.grid_d_ks[0]}$ and {block.grid_d_ks[1]}, {n(block.rates)} shared rates "
            "per point, under Adam centred a grid step lower than the one head's.",
            f"The quick build measures the rules' defaults at $d_k = {qblock.d_ks[0]}$, Adam, "
            f"{n(qblock.rates)} rates.",
        ],
        "transfer.md": [
            rf"The full build measures $d_k \in \{{{', '.join(map(str, plane.d_ks))}\}}$ with "
            f"{n(plane.rates)} shared rates on {n(len(plane.choose_seeds))} choice seeds.",
            f"The quick build measures $d_k = {qplane.d_ks[0]}$ alone, so it has no slopes of the "
            "best rates to show.",
        ],
        "failure-modes.md": [
            f"Both builds train {n(len(quick.ablation.seeds))} seeds per arm."
            if quick.ablation.seeds == full.ablation.seeds else
            f"The quick build trains {n(len(quick.ablation.seeds))} seeds per arm, the full build "
            f"{n(len(full.ablation.seeds))}.",
        ],
        "practice.md": [
            f"One block, one task, a {full.head_count.steps}-step budget, "
            f"{n(len(full.head_count.seeds))} seeds, and a grid of rates about a factor of three "
            "apart, each head count's best chosen and reported on the same seeds.",
        ],
        "temperature.md": [
            "It trains the recall head of the [failure-modes page](failure-modes.md#gradients-at-"
            f"initialisation) with {temperature.n_pairs} pairs, $d_{{\\text{{model}}}} = "
            f"{temperature.d_model}$ and unit initialisation, under Adam at $10^{{-2}}$ for "
            f"{quick.temperature.steps} steps, on {n(len(quick.temperature.seeds))} seeds.",
        ],
        "language-model.md": [
            f"The full build compares {n(len(lm.u_steps) - 1)} spreads at once, so each interval "
            "is wider than a plain 95% interval.",
        ],
    }


def setup_sentences(text: str) -> list[str]:
    """The size sentences of a page's collapsed boxes (``??? ...``), whitespace folded."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not re.match(r"\s*\?\?\? ", line):
            continue
        indent, body = len(line) - len(line.lstrip()), []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i].strip())
            i += 1
        text = " ".join(" ".join(body).split())
        found += [s.strip().removeprefix("- ") for s in SENTENCE.split(text) if SIZE.search(s)]
    return found


@pytest.mark.parametrize("doc", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_setup_box_states_the_sizes_the_profiles_run(doc):
    stated = setup_sentences((DOCS / doc).read_text(encoding="utf-8"))
    known = expected().get(doc, [])
    for sentence in stated:
        assert sentence in known, (f"{doc}: a setup box states a size that no expectation "
                                   f"reads against sdpa.sizes (add it to expected()): {sentence!r}")
    for sentence in known:
        assert sentence in stated, f"{doc}: its setup box no longer says {sentence!r}"
