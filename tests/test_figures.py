"""Figures: the CSV under each figure holds the numbers it plots; the SVG and CSV
downloads exist beside every page; the inline SVG follows the page."""

from __future__ import annotations

import csv
import io
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import sdpa
from conftest import REPO
from sdpa.plotted import CSV_COLUMNS
from sitebuild import markup
from sitebuild.figures import themed_figures

FIGURE = re.compile(r'<figure class="sdpa-figure" id="fig-([a-z0-9-]+)">(.*?)</figure>', re.S)


def rows(text: str) -> list[dict]:
    table = list(csv.DictReader(io.StringIO(text)))
    assert table and list(table[0]) == list(CSV_COLUMNS)
    return table


def points(table, kind, series=None, panel="1"):
    return [
        (float(r["x"]), float(r["y"]), float(r["value"]) if r["value"] else None)
        for r in table
        if r["kind"] == kind and r["panel"] == panel and (series is None or r["series"] == series)
    ]


def test_the_csv_holds_every_kind_of_plotted_number():
    x = np.array([1.0, 2.0, 4.0])
    figure = sdpa.Figure("csv-kinds", caption="Every artist.", alt="A test figure.", ncols=2)
    with figure as (left, right):
        left.plot(x, x**2, label="square")
        left.fill_between(x, x - 0.5, x + 0.25, alpha=0.2)
        left.errorbar(x, 3 * x, yerr=0.5, capsize=2, label="with bars")
        left.axhline(1.5, label="reference")
        left.set(xlabel="d_k", ylabel="loss", yscale="log", title="left")
        right.bar([0, 1, 2], [0.5, 0.25, 0.125], label="weights")
        right.scatter([1.0, 2.0], [3.0, 4.0], c=[0.1, 0.2], label="dots")
        right.imshow(np.arange(6.0).reshape(2, 3))
    table = rows(figure.csv)
    assert {r["panel"] for r in table} == {"1", "2"}
    first = next(r for r in table if r["panel"] == "1")
    assert (first["title"], first["x_label"], first["y_label"]) == ("left", "d_k", "loss")
    assert points(table, "line", "square") == [(1, 1, None), (2, 4, None), (4, 16, None)]
    assert points(table, "band") == [(1, 0.5, 1.25), (2, 1.5, 2.25), (4, 3.5, 4.25)]
    assert points(table, "line", "with bars") == [(1, 3, None), (2, 6, None), (4, 12, None)]  # no caps
    assert points(table, "error bar", "with bars") == [(1, 2.5, 3.5), (2, 5.5, 6.5), (4, 11.5, 12.5)]
    reference = points(table, "line", "reference")
    assert [y for _, y, _ in reference] == [1.5, 1.5] and reference[0][0] < 1 < 4 < reference[1][0]
    assert points(table, "bar", "weights", "2") == [(0, 0.5, None), (1, 0.25, None), (2, 0.125, None)]
    assert points(table, "point", "dots", "2") == [(1, 3, pytest.approx(0.1)), (2, 4, pytest.approx(0.2))]
    assert points(table, "image", panel="2") == [
        (col, row, 3.0 * row + col) for row in range(2) for col in range(3)
    ]


def test_a_histogram_outline_and_float32_numbers_are_exact():
    values = np.array([0.1, 0.2, 0.2, 0.7], dtype=np.float32)
    figure = sdpa.Figure("csv-hist", caption="A histogram.", alt="A test histogram.")
    with figure as ax:
        ax.hist(values, bins=2, range=(0, 1), histtype="step", label="scores")
        ax.plot([0, 1], values[:2], label="float32")
    table = rows(figure.csv)
    assert points(table, "outline", "scores") == [(0, 0, None), (0, 3, None), (0.5, 3, None),
                                                  (0.5, 1, None), (1, 1, None), (1, 0, None)]
    assert [np.float32(y) for _, y, _ in points(table, "line", "float32")] == list(values[:2])


def test_the_figure_html_carries_its_data_and_the_build_themes_it():
    figure = sdpa.Figure("themed", caption="Caption.", alt="Alt & text.", ncols=2)
    with figure as (left, right):
        left.plot([1, 2], [3, 4], color=sdpa.PALETTE[1])
        right.plot([1, 2], [4, 3], color=sdpa.INK)
        right.plot([], [])  # an empty line: matplotlib writes an empty group for it
    assert figure.html.count("<svg") == 2 and "\n\n" not in figure.html
    assert f'<script type="text/csv" class="sdpa-figure-data">\n{figure.csv}</script>' in figure.html
    svg = re.search(r"<svg\b.*?</svg>", figure.html, re.S).group(0)
    inline = re.search(r"<svg\b.*?</svg>", themed_figures(figure.html)[0], re.S).group(0)
    assert sdpa.INK not in inline and "currentColor" in inline
    assert f"var(--sdpa-c1, {sdpa.PALETTE[1]})" in inline
    ids = re.findall(r'\bid="([^"]+)"', inline)
    assert ids and all(i.startswith("themed-") for i in ids)
    assert 'aria-labelledby="themed-title"' in inline and 'id="themed-title">Alt &amp; text.<' in inline
    assert 'width="' not in inline.split(">", 1)[0] and "max-width" in inline.split(">", 1)[0]
    # No group without attributes is left, and every group that stays is closed.
    assert svg.count("<g>") > 0 and inline.count("<g>") == 0 and "<g/>" not in inline
    assert "<g class=\"mpl-line\"/>" in inline
    assert len(re.findall(r"<g\b[^>]*[^/]>", inline)) == inline.count("</g>") > 0


@pytest.mark.pages("derivation.md")
def test_a_real_figure_csv_holds_its_snippet_numbers(run_snippet):
    run = run_snippet("derivation/gap_ratio.py")
    table = rows(run.namespace["figure"].csv)
    for r in run.namespace["result"]:
        for key, series in (("gap_unscaled", f"n = {r['n']}, q·k"), ("gap_scaled", f"n = {r['n']}, scaled")):
            (y,) = [y for x, y, _ in points(table, "line", series) if x == r["d_k"]]
            assert math.isclose(y, r[key], rel_tol=1e-8)


# ---- the built site ------------------------------------------------------------------


def test_every_figure_links_its_svg_and_csv(built_site):
    pages = sorted(built_site.rglob("index.html"))
    seen = 0
    for page in pages:
        text = page.read_text()
        assert '<script type="text/csv"' not in text, f"{page}: a figure's data block was left in the page"
        for name, body in FIGURE.findall(text):
            seen += 1
            caption = re.search(r"<figcaption>(.*?)</figcaption>", body, re.S).group(1)
            for suffix in ("svg", "csv"):
                assert f'href="figures/{name}.{suffix}" download' in caption, f"{page}: {name} lacks .{suffix}"
                assert (page.parent / "figures" / f"{name}.{suffix}").is_file()
            svg = ElementTree.parse(page.parent / "figures" / f"{name}.svg").getroot()
            assert svg.tag == "{http://www.w3.org/2000/svg}svg"
            assert svg.find("{http://www.w3.org/2000/svg}title").text.strip()
            table = rows((page.parent / "figures" / f"{name}.csv").read_text())
            assert all(r["x"] and r["y"] for r in table), f"{name}: a row without coordinates"
    assert seen >= 20, f"only {seen} figures found on the built pages"


@pytest.mark.pages("derivation.md")
def test_the_built_csv_is_the_snippets_csv(built_site, run_snippet):
    run = run_snippet("derivation/gap_ratio.py")
    assert (built_site / "derivation" / "figures" / "gap-growth.csv").read_text() == run.namespace["figure"].csv


def test_the_build_reads_the_figure_format_without_torch_or_matplotlib():
    """The MkDocs process runs no snippet (workers do, into the store): its hooks, the
    theming and the build report read the colours and the markup from sdpa.style, which
    loads neither."""
    code = ("import sys; sys.path.insert(0, '.'); import sitebuild.hooks, sitebuild.figures; "
            "print(sorted({'torch', 'matplotlib', 'numpy'} & set(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_log_axes_are_labelled_in_plain_text():
    """matplotlib writes a log axis's labels as mathtext (one <tspan> per glyph, the TeX in
    a comment); sdpa.Figure has them written as text: "10⁻²", "2×10⁻¹", "−10³"."""
    assert [sdpa.svg.plain_text(label) for label in (
        r"$\mathdefault{10^{-2}}$", r"$\mathdefault{2\times10^{-1}}$", r"$\mathdefault{-10^{3}}$", "0.5", "")] == [
        "10⁻²", "2×10⁻¹", "−10³", "0.5", ""]
    figure = sdpa.Figure("log-labels", caption="Caption.", alt="A log axis.")
    with figure as ax:
        ax.plot([1, 2, 3], [1e-3, 1e-1, 10])
        ax.set_yscale("log")
    assert ">10⁻²</text>" in figure.html and "mathdefault" not in figure.html and "<!--" not in figure.html


def test_the_build_shortens_coordinates_but_keeps_every_opacity(tmp_path):
    """Coordinates to 0.1 pt; a style's numbers as matplotlib wrote them (the grid's 0.18
    opacity was once drawn at 0.1)."""
    from types import SimpleNamespace

    from sitebuild.figures import on_page_content

    figure = sdpa.Figure("opacity", caption="Caption.", alt="A line and its band.")
    with figure as ax:
        ax.plot([0.123456, 1], [0.654321, 2])
        ax.fill_between([0, 1], [0, 1], [1, 2], alpha=0.22)
    page = SimpleNamespace(url="page/")
    html = on_page_content(f"<p>Text.</p>\n{figure.html}", page, SimpleNamespace(site_dir=str(tmp_path)), None)
    styles = " ".join(re.findall(r'style="([^"]*)"', html))
    assert f"stroke-opacity: {sdpa.figures.STYLE['grid.alpha']}" in styles and "fill-opacity: 0.22" in styles
    paths = re.findall(r'<path d="([^"]*)"', html)
    assert paths and not [p for p in paths if re.search(r"\.\d\d", p)], paths[:3]


def test_a_drawing_read_as_a_tree_is_written_back_byte_for_byte():
    """The build edits the SVG as a tree (sitebuild.markup): what it does not edit stays
    as matplotlib wrote it, comments, namespaces, newlines in attributes and all."""
    figure = sdpa.Figure("round-trip", caption="Caption.", alt="It's <d_k> & \"more\".", ncols=2)
    with figure as (left, right):
        left.plot([1, 2], [3, 4], label="a")
        left.set(yscale="log", title="$d_k$")  # mathtext: matplotlib writes its TeX in a comment
        left.legend()
        right.imshow([[0.0, 1.0], [2.0, 3.0]])  # a raster image: base64 data in xlink:href
    svgs = re.findall(r"<svg\b.*?</svg>", figure.html, re.S)
    assert len(svgs) == 2 and "<!--" in svgs[0] and "xlink:href" in svgs[0]
    for svg in svgs:
        svg = svg.replace("&#x27;", "'").replace("&quot;", '"')  # the title, written by html.escape
        assert markup.write(markup.parse(svg)) == svg


def test_an_edited_palette_is_the_one_the_build_themes(tmp_path, monkeypatch):
    """Under ``mkdocs serve``, an edit of ``PALETTE`` in ``sdpa/style.py`` is imported
    again at the next rebuild (the runner forgets the library's modules), and the figures
    hook themes the new colour (it once kept the palette it read at its own import)."""
    import importlib
    import sys
    from types import SimpleNamespace

    from sitebuild.figures import on_page_content

    new = "#123456"
    figure = sdpa.Figure("edited", caption="Caption.", alt="A line in an edited colour.")
    with figure as ax:
        ax.plot([0, 1], [0, 1], color=new)
    page, config = SimpleNamespace(url="page/"), SimpleNamespace(site_dir=str(tmp_path))
    assert f"var(--sdpa-c0, {new})" not in on_page_content(figure.html, page, config, None)
    edited = (REPO / "snippets" / "sdpa" / "style.py").read_text().replace(sdpa.PALETTE[0], new, 1)
    (tmp_path / "sdpa").mkdir()
    (tmp_path / "sdpa" / "style.py").write_text(edited)
    monkeypatch.setattr(sdpa, "style", importlib.import_module("sdpa.style"))  # put back after the test
    monkeypatch.delitem(sys.modules, "sdpa.style")  # what the runner does under serve
    monkeypatch.setattr(importlib.import_module("sdpa"), "__path__", [str(tmp_path / "sdpa")])
    assert f"var(--sdpa-c0, {new})" in on_page_content(figure.html, page, config, None)
