"""One symbol, one meaning (issue 38): the glossary's notation table is the only definition.

Every symbol in the pages' math (docs/*.md and includes/**/*.md, their TeX between ``$``
signs) must be a symbol the table defines, and the table defines each symbol once.

What a symbol is, read from TeX:

- a single Latin letter or a Greek letter (``\\alpha`` ... ``\\Omega``, ``\\varphi``), each
  letter on its own: ``QK`` is ``Q`` and ``K``;
- with its subscript when the subscript names it (``d_k``, ``W_Q``, ``\\sigma_z``,
  ``d_\\text{model}``, ``L_0``, ``\\beta_1``, ``m_t``, ``p_{\\max}``): a capital, one of the
  letters q, k, v, z, t, digits, or a word of two or more letters;
- without it when the subscript is an index (``q_m``, ``z_{ij}``, ``R_{i+\\Delta}``): one of
  the index letters i, j, l, m, n or their pairs, a Greek letter, or an expression; the
  letters inside an index are symbols too;
- with ``^*`` or ``^\\ast`` when they mark the best of a sweep (``\\eta^*``, ``L^\\ast``).

What is not a symbol: numbers; operators and functions written as commands (``\\sum``,
``\\log``, ``\\sqrt``, ``\\max``, ``\\cdot``); names set upright or in other alphabets
(``\\mathrm{Var}``, ``\\mathrm{softmax}``, ``\\text{top}``, ``\\mathbb{E}``, ``\\mathbb{R}``,
``\\mathbf{1}``); the ``d`` of a derivative written ``\\frac{d}{d\\beta}``. Code (in backticks
or fences) is not math.

A page's symbol that the table lacks fails, with the pages that use it; so does a symbol that
two rows of the table define. No allow-list: a symbol a page needs goes into the table, with
its one meaning, or the page writes it another way.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

from conftest import DOCS, REPO

GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
    "pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta "
    "Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split())
#: Subscript letters that index (a component, a key, a row, a position), never name.
INDEX = set("ijlmn")
#: Single lowercase subscript letters that name: d_k, sigma_q, gamma_k, sigma_z, m_t.
NAMING = set("qkvzt")
GLOSSARY = DOCS / "glossary.md"

#: Display math, then inline math (which may run over a line break, not over a blank line).
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)((?:[^$\n]|\n(?![ \t]*\n))+?)\$", re.S)
#: Names set upright or in another alphabet: not symbols (a subscript's name is kept first).
_UPRIGHT = re.compile(r"\\(?:text|textrm|mathrm|operatorname|mathbb|mathbf|mathcal|mathsf)\s*\{[^{}]*\}")
_MARKUP = re.compile(r"\\(?:label|eqref|ref|tag|begin|end)\s*\{[^{}]*\}")
#: The d of a derivative: d/d(beta) as a fraction, or d written against its variable (dT, d\beta).
_DERIVATIVE = re.compile(r"\\frac\s*\{\s*d\s*\}|(?<![A-Za-z\\])d(?=[A-Za-z]|\\(?:" + "|".join(GREEK) + r")\b)")


def math_segments(markdown: str) -> list[str]:
    """The TeX of a Markdown page: every ``$...$`` and ``$$...$$``, code left out."""
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [m.group(1) or m.group(2) for m in _MATH.finditer(text)]


def _group(tex: str, i: int) -> tuple[str, int]:
    """The braced group or the single token at ``tex[i]``, and where it ends."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
        return tex[i + 1:], len(tex)
    token = re.match(r"\\[A-Za-z]+|.", tex[i:]).group(0)
    return token, i + len(token)


def _naming(subscript: str) -> str | None:
    """The subscript as part of a symbol's name, or None where it is an index."""
    name = re.sub(r"\\(?:text|textrm|mathrm|operatorname)\s*\{([^{}]*)\}", r"\1", subscript).strip()
    name = re.sub(r"^\\(max|min)$", r"\1", name)
    if re.fullmatch(r"[0-9]+|[A-Z]|[" + "".join(NAMING) + "]", name):
        return name
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]+", name) and not set(name) <= INDEX:
        return name
    return None


def symbols(tex: str, *, index_letters: bool = True) -> list[str]:
    """The symbols of one TeX formula, in order (see the module's docstring)."""
    tex = _MARKUP.sub(" ", tex)
    tex = _DERIVATIVE.sub(" ", tex)
    tex = re.sub(r"_\s*\{?\s*(\\(?:text|textrm|mathrm)\s*\{[^{}]*\})\s*\}?", r"_{\1}", tex)
    out: list[str] = []
    i = 0
    while i < len(tex):
        upright = _UPRIGHT.match(tex, i)
        if upright:
            i = upright.end()
            continue
        command = re.match(r"\\([A-Za-z]+)", tex[i:])
        if command:
            i += len(command.group(0))
            if command.group(1) not in GREEK:
                continue
            base = "\\" + command.group(1)
        elif tex[i].isalpha():
            base, i = tex[i], i + 1
        else:
            i += 1
            continue
        name = base
        rest = re.match(r"\s*_", tex[i:])
        if rest:
            subscript, i = _group(tex, i + len(rest.group(0)))
            named = _naming(subscript)
            if named is None:
                if index_letters:
                    out.extend(symbols(subscript))
            else:
                name += "_" + named
        star = re.match(r"\s*\^\s*(\*|\\ast\b|\{\s*(\*|\\ast)\s*\})", tex[i:])
        if star:
            name, i = name + "^*", i + len(star.group(0))
        out.append(name)
    return out


def table() -> dict[str, list[str]]:
    """The notation table: each symbol its first column defines, with the rows defining it."""
    text = GLOSSARY.read_text().split("## Notation", 1)[1]
    defined: dict[str, list[str]] = collections.defaultdict(list)
    for row in re.findall(r"^\| .+ \|$", text, re.M):
        for segment in math_segments(row.split(" | ")[0]):
            for symbol in symbols(segment, index_letters=False):
                if row not in defined[symbol]:
                    defined[symbol].append(row)
    return defined


def digits_index(symbol: str) -> str:
    """A digit subscript names a symbol the table defines (z_0, L_0, beta_1); elsewhere it
    indexes one (z_1, ..., z_n; Q_1 and Q_2): the symbol is its base."""
    return re.sub(r"_[0-9]+$", "", symbol)


def sources() -> list[Path]:
    return sorted(DOCS.glob("*.md")) + sorted((REPO / "includes").rglob("*.md"))


def used() -> dict[str, set[str]]:
    """Every symbol of the pages' math, with the files that use it."""
    where: dict[str, set[str]] = collections.defaultdict(set)
    for path in sources():
        for segment in math_segments(path.read_text()):
            for symbol in symbols(segment):
                where[symbol].add(path.relative_to(REPO).as_posix())
    return where


def test_the_reading_of_tex():
    read = symbols(r"\mathrm{Var}(q \cdot k) = \sum_{m=1}^{d_k} q_m k_m = d_k\, \sigma_q^2 \sigma_k^2")
    assert read == ["q", "k", "m", "d_k", "m", "q", "m", "k", "d_k", r"\sigma_q", r"\sigma_k"]
    assert symbols(r"W_Q, W_{\text{K}}, d_\text{model}, \eta^*, L^\ast, z_{ij}, p_{\max}") == [
        "W_Q", "W_K", "d_model", r"\eta^*", "L^*", "i", "j", "z", "p_max"]
    assert symbols(r"\frac{d}{d\beta} \log Z = \mathbb{E}_p[z], \quad e^{H}, \lVert J \rVert_2") == [
        r"\beta", "Z", "p", "z", "e", "H", "J"]
    assert symbols(r"R_{i+\Delta}\, q, \ m_t' = m_t / \sqrt{c}, \ \lambda_{\text{init}}") == [
        "i", r"\Delta", "R", "q", "m_t", "m_t", "c", r"\lambda_init"]
    assert math_segments("a `$x$` and $y$, $$z$$ and\n```\n$w$\n```\n") == ["y", "z"]


def test_the_table_defines_each_symbol_once():
    twice = {symbol: rows for symbol, rows in table().items() if len(rows) > 1}
    assert not twice, "defined in two rows: " + "; ".join(f"{s}: {rows}" for s, rows in twice.items())


def test_every_symbol_in_the_pages_is_in_the_table():
    defined = table()
    missing = {symbol: sorted(files) for symbol, files in used().items()
               if symbol not in defined and digits_index(symbol) not in defined}
    assert not missing, "symbols the notation table lacks:\n" + "\n".join(
        f"  {symbol}: {', '.join(files)}" for symbol, files in sorted(missing.items()))


def test_the_lead_s_decisions_are_in_the_table():
    """TEAM.md's notation: the plane's point is (u, w); v is only the value vector; the starting
    spread is sigma_z; kappa the cap; gamma the QK-norm gains; one row for eta."""
    defined = table()
    row = {symbol: rows[0] for symbol, rows in defined.items()}
    assert row["u"] == row["w"] and "plane" in row["u"]
    assert "value" in row["v"] and "plane" not in row["v"]
    assert "starting spread" in row[r"\sigma_z"] and "initialisation" in row[r"\sigma_z"]
    assert "cap" in row[r"\kappa"] and "gains" in row[r"\gamma_q"]
    assert row[r"\eta"] == row[r"\eta^*"]
    assert "1/\\sqrt{d_k}" in row["s"] and "correlation" in row[r"\rho"]


#: The Greek letters a page's text may write outside math, with the TeX the table defines them by.
UNICODE_GREEK = {"α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon",
                 "η": r"\eta", "θ": r"\theta", "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu",
                 "ν": r"\nu", "ξ": r"\xi", "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau", "φ": r"\varphi",
                 "ω": r"\omega", "Δ": r"\Delta", "Σ": r"\Sigma", "Θ": r"\Theta"}
SUBSCRIPTS = dict(zip("₀₁₂ₖₘₗₙ", "012kmln"))
#: Names that hold a Greek letter and are not symbols: μP (muP), u-μP, μ-transfer.
NAMES = re.compile(r"u-μP|μP|μ-transfer|μ-Transfer")


def text_symbols(page_html: str) -> list[tuple[str, str]]:
    """The Greek symbols of a built page's text (its article, less math, code and drawings):
    (the symbol as the table writes it, 80 characters around it)."""
    import html as html_module

    article = page_html[page_html.find("<article"):page_html.find("</article>")]
    article = re.sub(r"<(math|pre|code|script|style|svg)\b.*?</\1>", " ", article, flags=re.S)
    text = NAMES.sub(" ", html_module.unescape(re.sub(r"<[^>]+>", "", article)))
    found = []
    for m in re.finditer(r"([α-ωΑ-Ω])(?:_(\w+)|([₀₁₂ₖₘₗₙ]))?", text):
        letter, sub = m.group(1), m.group(2) or SUBSCRIPTS.get(m.group(3) or "", "")
        symbol = UNICODE_GREEK.get(letter, letter)
        if sub and _naming(sub):
            symbol += "_" + sub
        found.append((symbol, text[max(0, m.start() - 80):m.end() + 80]))
    return found


def test_the_greek_letters_of_prose_and_captions_are_the_tables(built_site):
    """Issue 46, item 4: one symbol, one meaning in prose and captions too. Every Greek letter a
    page writes outside math (a caption, a table, a printed line) is a symbol the table defines;
    sigma_z is only ever the starting spread, and alpha, the exponent of d_k^-alpha, appears in
    math alone."""
    defined = table()
    for path in sorted(built_site.rglob("index.html")):
        if "code" in path.relative_to(built_site).parts:
            continue
        page = path.read_text(encoding="utf-8")
        for symbol, around in text_symbols(page):
            where = f"{path.relative_to(built_site)}: {around!r}"
            assert symbol in defined or digits_index(symbol) in defined, f"{symbol} is not in the table: {where}"
            assert symbol != r"\alpha", f"alpha outside math: {where}"
            if symbol == r"\sigma_z":  # the page names it where it uses it
                assert "starting spread σ_z" in page, f"sigma_z, not named the starting spread: {where}"


def test_the_reading_of_text():
    page = ("<article><p>By starting spread σ_z (one head) and μP, ρ = 0.5;</p><math>α</math>"
            "<figcaption>σ² and Σ p²</figcaption></article>")
    assert [s for s, _ in text_symbols(page)] == [r"\sigma_z", r"\rho", r"\sigma", r"\Sigma"]
