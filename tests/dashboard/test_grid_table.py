"""The landing grid's HTML table: colours from the heatmap's scale, one drill-down link per cell, names escaped."""
from __future__ import annotations

import html
import re
from urllib.parse import parse_qs

import pandas as pd

from muttlab.dashboard.grid_table import accuracy_grid_html


def _cells(rows):
    return pd.DataFrame(rows, columns=["metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high"])


def _cell_links(body: str) -> dict[tuple[str, str, int], tuple[str, str]]:
    """(metric, corruption, refs) -> (class of the cell, text shown), from the table's links."""
    out = {}
    for cls, href, text in re.findall(r'<td class="([^"]+)"><a href="drilldown\?([^"]+)"[^>]*>([^<]*)</a>', body):
        query = parse_qs(html.unescape(href))
        out[(query["metric"][0], query["corruption"][0], int(query["refs"][0]))] = (cls, text)
    return out


def _background(body: str, cls: str) -> str:
    rule = re.search(rf"td\.{cls}\{{background:([^}}]+)\}}", body)
    assert rule, f"no colour rule for {cls}"
    return rule.group(1)


def test_each_cell_is_coloured_at_the_percentage_it_shows():
    cells = _cells([("BLEU-4", "neg_subj", 5, 200, 7, 3.5, 1.7, 7.0),
                    ("BLEU-4", "det_sub", 5, 200, 101, 50.5, 43.6, 57.3),
                    ("TER", "neg_subj", 5, 336, 331, 98.51, 96.6, 99.4),
                    ("TER", "det_sub", 5, 65, 65, 100.0, 94.4, 100.0)])
    body = accuracy_grid_html(cells)
    links = _cell_links(body)
    # Python formats 3.5 and 50.5 to the even neighbour, as the number in the cell does.
    assert {k: text for k, (_, text) in links.items()} == {
        ("BLEU-4", "neg_subj", 5): "4", ("BLEU-4", "det_sub", 5): "50", ("TER", "neg_subj", 5): "99",
        ("TER", "det_sub", 5): "100"}
    # ColorBrewer's RdYlBu (11 classes, as published), its stops 10 % apart, blended linearly in between.
    stops = ["a50026", "d73027", "f46d43", "fdae61", "fee090", "ffffbf", "e0f3f8", "abd9e9", "74add1", "4575b4",
             "313695"]
    for (metric, corruption, refs), (cls, text) in links.items():
        at, below = divmod(int(text), 10)
        low, high = stops[at], stops[min(at + 1, 10)]
        expected = [int(low[i:i + 2], 16) + (int(high[i:i + 2], 16) - int(low[i:i + 2], 16)) * below / 10
                    for i in (0, 2, 4)]
        assert _background(body, cls) == "rgb({:.0f}, {:.0f}, {:.0f})".format(*expected)
    # The end of the scale: RdYlBu's dark blue, under white text.
    assert _background(body, links[("TER", "det_sub", 5)][0]) == "rgb(49, 54, 149)"
    assert re.search(r"td\.mutt-a100 a\{color:#ffffff\}", body)


def test_missing_cells_are_empty_and_names_are_escaped():
    evil = 'M<script>alert("x")</script>&'
    cells = _cells([(evil, "neg_subj", 5, 10, 5, 50.0, 23.7, 76.3),
                    ("BLEU-4", "neg_subj", 5, 10, 1, float("nan"), float("nan"), float("nan"))])
    body = accuracy_grid_html(cells, labels={"neg_subj": "Negated <b>Subject</b>"})
    assert "<script>" not in body and "<b>" not in body
    assert html.escape(evil) in body and "Negated &lt;b&gt;Subject&lt;/b&gt;" in body
    # The metric's name reaches the drill-down intact through its link.
    assert list(_cell_links(body)) == [(evil, "neg_subj", 5)]
    assert body.count('<td class="mutt-empty"></td>') == 1


def test_each_cell_is_named_by_metric_type_references_and_value():
    cells = _cells([("BLEU-4", "neg_subj", 5, 336, 327, 97.321, 95.0, 98.6),
                    ("<b>x</b>", "neg_subj", 10, 336, 300, 89.286, 85.5, 92.2)])
    body = accuracy_grid_html(cells, {"neg_subj": "Negated Subject"})
    names = [html.unescape(n) for n in re.findall(r'<a [^>]*aria-label="([^"]+)"', body)]
    # 327 of 336 is 97.3 %; 300 of 336 is 89.3 % (counted by hand). A metric name is escaped in the markup.
    assert names == ["BLEU-4, Negated Subject, 5 references: accuracy 97.3% (327/336)",
                     "<b>x</b>, Negated Subject, 10 references: accuracy 89.3% (300/336)"]
    assert "<b>x</b>," not in body
    assert re.findall(r'<table [^>]*aria-label="([^"]+)"', body) == [
        "Accuracy with 5 references (arrow keys move between cells)",
        "Accuracy with 10 references (arrow keys move between cells)"]
