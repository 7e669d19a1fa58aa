"""Where text cannot hold math (the browser tab, the header, the table of contents, a
figure's text alternative), √d_k is written as a reader reads it: √dₖ."""

from __future__ import annotations

import re

from sitebuild.readable import readable


def test_readable_writes_one_letter_subscripts_only():
    assert readable("Why √d_k, not d_k or 1/d_v?") == "Why √dₖ, not dₖ or 1/dᵥ?"
    assert readable("W_Q, d_model, query_pre_attn_scalar, x_1") == "W_Q, d_model, query_pre_attn_scalar, x_1"


def test_titles_headings_and_figure_text_show_no_underscored_d_k(built_site):
    for path in sorted(built_site.rglob("index.html")):
        page = path.read_text()
        title = re.search(r"<title>(.*?)</title>", page).group(1)
        assert "√dₖ" in title and "d_k" not in title, f"{path}: {title}"
        names = re.findall(r'<span class="md-ellipsis">(.*?)</span>', page, re.S)  # nav and contents
        headings = re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", page, re.S)
        alts = re.findall(r'<title id="[^"]+">(.*?)</title>', page)
        for text in names + headings + alts:
            plain = re.sub(r'<(code|math)\b.*?</\1>|<[^>]+>', "", text, flags=re.S)
            assert "d_k" not in plain, f"{path}: {plain.strip()[:80]!r}"


def test_anchors_keep_the_text_as_written(built_site):
    home = (built_site / "index.html").read_text()
    assert 'id="why-attention-divides-by-d_k"' in home and ">Why attention divides by √dₖ<" in home
