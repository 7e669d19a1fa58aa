"""Write the site's math font: STIX Math, cut down to the glyphs the formulas use (a tool).

Reads the OpenType MATH font of Debian's ``fonts-stix`` package (STIX 1.1, SIL Open Font
License 1.1) and writes ``docs/assets/fonts/stix-math.woff2`` with the characters that
the built site's formulas use, their italic, bold and double-struck math letters, the
Latin and Greek alphabets, and every size variant and piece the MATH table needs to
stretch them (fontTools keeps those). ``tests/test_math.py`` fails when a formula uses a
character the font lacks: run this again then.

    apt-get install fonts-stix
    python scripts/subset_math_font.py --site /tmp/site
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from fontTools import subset

REPO = Path(__file__).resolve().parents[1]
SOURCE = Path("/usr/share/fonts/opentype/stix-word/STIXMath-Regular.otf")
TARGET = REPO / "docs" / "assets" / "fonts" / "stix-math.woff2"

#: Always there: ASCII, the Greek alphabet, and the math alphabets a browser switches a
#: single-letter identifier to (italic) or that TeX commands name (bold, double-struck).
BASE = (
    [chr(c) for c in range(0x20, 0x7F)]
    + [chr(c) for c in range(0x391, 0x3CA)]
    + [chr(c) for c in range(0x1D400, 0x1D4D0)]  # bold, italic, bold italic A-z
    + [chr(c) for c in range(0x1D538, 0x1D56C)]  # double-struck A-z
    + [chr(c) for c in range(0x1D6A8, 0x1D7CA)]  # bold and italic Greek
    + [chr(c) for c in range(0x1D7CE, 0x1D7E2)]  # bold and double-struck digits
    + list("ℎℂℍℕℙℚℝℤ∂∇∞±×÷·⋅−∑∏∫√∈∉⊆⊂∪∩≤≥≠≈≡∼→←↦⟨⟩‖∣ᵀ⊤′″…⋯")
)


def used_characters(site: Path) -> set[str]:
    """Every character inside a ``<math>`` element of the built site."""
    found: set[str] = set()
    for page in site.rglob("*.html"):
        for formula in re.findall(r"<math\b.*?</math>", page.read_text(), re.S):
            text = re.sub(r"<[^>]+>", "", formula)
            found.update(re.sub(r"&#?\w+;", "", text))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True, help="a built site")
    parser.add_argument("--font", type=Path, default=SOURCE)
    args = parser.parse_args()
    characters = sorted(set(BASE) | used_characters(args.site))
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.hinting = False
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = subset.load_font(str(args.font), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in characters])
    subsetter.subset(font)
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(TARGET), options)
    print(f"{TARGET.relative_to(REPO)}: {len(characters)} characters, {TARGET.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
