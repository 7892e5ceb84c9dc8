"""The Run page's first screen: the grid's columns grouped by family with a legend, the read-only notice,
the way to Published vs measured, and the glossary."""
from __future__ import annotations

import re

from muttlab.corruptions import catalog
from muttlab import api
from muttlab.dashboard.glossary import TERMS, term
from muttlab.settings import load_settings
from muttlab.dashboard.grid_table import accuracy_grid_html
from tests.dashboard.conftest import grid_html, open_page, shown_errors

FAMILIES = ["meaning-altering", "meaning-preserving", "fluency-disrupting"]


def _column_headers(body: str) -> list[str]:
    """The corruption labels of the first table's second header row, in order."""
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[0])
    return [h for h in re.findall(r"<th[^>]*>([^<]*)</th>", rows[1]) if h]


def test_the_columns_are_grouped_under_their_family():
    grid = api.snapshot("grid").content
    # Families interleaved on purpose: the grid must regroup them.
    order = ["passive", "neg_subj", "double_PP", "det_sub", "neg_verb", "remove_prep"]
    body = accuracy_grid_html(grid.select(["BLEU-4"], order, [5]), metric_order=["BLEU-4"],
                              corruption_order=order)
    families = re.findall(r'<th class="mutt-family" colspan="(\d)">([^<]*)</th>', body)
    assert families == [("2", "meaning-preserving"), ("2", "meaning-altering"), ("2", "fluency-disrupting")]
    assert _column_headers(body) == ["passive", "det_sub", "neg_subj", "neg_verb", "double_PP", "remove_prep"]
    for name in _column_headers(body):
        assert catalog.get(name).family.value == families[_column_headers(body).index(name) // 2][1]


def test_the_landing_grid_has_family_headers_and_a_legend(app_env):
    at = open_page("run")
    assert not shown_errors(at)
    body = grid_html(at)
    shown = re.findall(r'<th class="mutt-family" colspan="(\d+)">([^<]*)</th>', body)
    # data/README.md: four meaning-altering sets (shuffled among them), three of each other family.
    assert shown[:3] == [("4", FAMILIES[0]), ("3", FAMILIES[1]), ("3", FAMILIES[2])]
    legend = body[body.index('class="mutt-legend"'):]
    assert "0% (red)" in legend and "100% (blue)" in legend and "grey: not scored" in legend


def test_a_read_only_server_says_so(app_env, monkeypatch):
    at = open_page("run")
    assert not any("Read-only" in i.value for i in at.info)
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = open_page("run")
    assert not shown_errors(at)
    assert any(i.value.startswith("**Read-only demo.**") for i in at.info)


def test_the_landing_page_points_to_published_and_explains_its_terms(app_env):
    at = open_page("run")
    links = [link.proto for link in at.get("page_link")]
    assert any(link.label.startswith("Published vs measured") and link.page == "published"
               for link in links)
    glossary = next(e for e in at.expander if e.label.startswith("Glossary"))
    text = "\n".join(m.value for m in glossary.markdown)
    assert set(TERMS) == {"signature", "tie", "tie rule", "Wilson interval", "margin (orig > corr)",
                          "margin (difference)", "noise floor", "references (5/10/20)", "unsupported", "not applied"}
    for name in TERMS:
        assert f"**{name}**: {term(name, load_settings())}" in text
    assert "|s_orig − s_corr| ≤ 1e-9 × max(1, |s_orig|) (tie:1e-9)" in text


def test_the_glossary_prints_the_servers_rules_not_the_default(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_TIE_RULE", "exact")
    at = open_page("run")
    glossary = next(e for e in at.expander if e.label.startswith("Glossary"))
    text = "\n".join(m.value for m in glossary.markdown)
    assert "two scores tie only when they are exactly equal (tie:exact" in text
    assert "This server's rules: tol:0.15|tie:exact." in text and "1e-9" not in text
