"""Compare TeX-to-MathML converters on the site's own formulas (not a test: a tool).

Every formula of a built site (the TeX each ``<math>`` keeps in ``alttext``) goes through
each converter, and the output is checked against MathML Core, the part of MathML that
browsers implement: no error, no TeX left in the text (``in\\_features``), one ``<mi>``
per multi-letter name (``softmax``, not seven letters), none of the attributes and
elements MathML Core dropped (named spaces such as ``thinmathspace``, ``mathvariant``
other than ``normal``, ``mfenced``, ``mstyle`` sizes ...), and whether an ``aligned``
environment converts.

    python scripts/compare_math.py --site /tmp/site      # a site you built
"""

from __future__ import annotations

import argparse
import html
import re
from collections import Counter
from pathlib import Path

NAMED_SPACE = re.compile(r'"(?:(?:very){0,2}(?:thin|thick)|medium|negative\w*)mathspace"')
NOT_CORE = {
    "named space": NAMED_SPACE,
    "mathvariant other than normal": re.compile(r'mathvariant="(?!normal")'),
    "deprecated element": re.compile(r"<(?:mfenced|menclose|mglyph|maction)\b"),
    "deprecated attribute": re.compile(r'\b(?:columnalign|rowalign|fontstyle|fontweight|fontfamily|'
                                       r'mathsize|mathcolor|mathbackground|columnspacing|rowspacing)='),
}
SPLIT_NAME = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){3,}')
TEX_LEFT = re.compile(r">[^<]*\\[A-Za-z_{}][^<]*<")
ALIGNED = r"\begin{aligned} a &= b + c \\ d &= e \end{aligned}"


def formulas(site: Path) -> list[tuple[str, bool]]:
    found = []
    for page in sorted(site.rglob("*.html")):
        for match in re.finditer(r'<math\b([^>]*)>', page.read_text()):
            tex = re.search(r'alttext="([^"]*)"', match.group(1))
            if tex:
                found.append((html.unescape(tex.group(1)), 'display="block"' in match.group(1)))
    return sorted(set(found))


def converters():
    from latex2mathml.converter import convert as latex2mathml
    import math_core

    core = math_core.LatexToMathML(fancy_error=False)
    return {
        "latex2mathml": lambda tex, block: latex2mathml(tex, display="block" if block else "inline"),
        "math-core": lambda tex, block: core.convert_with_local_state(tex, displaystyle=block),
    }


def check(convert, tex: str, block: bool) -> list[str]:
    try:
        out = convert(tex, block)
    except Exception as error:  # noqa: BLE001 - each converter raises its own types
        return [f"error: {str(error).splitlines()[0][:60]}"]
    problems = [name for name, pattern in NOT_CORE.items() if pattern.search(out)]
    if SPLIT_NAME.search(out):
        problems.append("name split into letters")
    if TEX_LEFT.search(out.replace("&lt;", "<")):
        problems.append("TeX left in the text")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True)
    args = parser.parse_args()
    found = formulas(args.site)
    print(f"{len(found)} distinct formulas")
    for name, convert in converters().items():
        counts, examples = Counter(), {}
        for tex, block in found:
            for problem in check(convert, tex, block):
                counts[problem] += 1
                examples.setdefault(problem, tex)
        aligned = "converts" if not check(convert, ALIGNED, True) else "fails"
        print(f"\n{name}: {sum(1 for tex, block in found if not check(convert, tex, block))} of "
              f"{len(found)} formulas clean; aligned {aligned}")
        for problem, count in counts.most_common():
            print(f"  {count:4d}  {problem:32s} e.g. ${examples[problem][:60]}$")


if __name__ == "__main__":
    main()
