"""`muttlab report`: a dashboard link becomes one offline HTML file (its figures drawn by plotly.js, inlined; text
escaped)."""
from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from muttlab.cli import main
from muttlab.dashboard.report import build_report, parse_view
from muttlab.errors import MuttlabError
from muttlab.settings import load_settings
from tests.dashboard.conftest import figure_title, figures_in_html, html_tables, trial_cards


def test_parse_view_accepts_links_paths_and_query_strings(sample_settings):
    assert parse_view(sample_settings, "http://host:8501/drilldown?metric=BLEU-4&refs=5").page == "drilldown"
    view = parse_view(sample_settings, "metrics=BLEU-4,TER&refs=5")
    assert view.page == "run" and view.values("metrics") == ["BLEU-4", "TER"]
    assert parse_view(sample_settings, "page=drilldown&metric=TER").params == {"page": "drilldown", "metric": "TER"}
    with pytest.raises(MuttlabError, match="no report for the page"):
        parse_view(sample_settings, "/annotate?pair=3")


def test_precomputed_grid_report_inlines_plotly(sample_settings):
    document = build_report(sample_settings, "metrics=BLEU-4&corruptions=neg_subj&refs=5")
    assert document.count("Plotly.newPlot(") == 1 and 'id="mutt-chart-0"' in document  # inlined, then called
    assert "<script src=" not in document
    assert "BLEU-4" in document and "muttlab " in document and "CC BY-NC-SA 3.0" in document


def test_a_report_under_other_rules_never_gives_the_shipped_grid_as_its_numbers(tmp_path, monkeypatch, cache_dir):
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache_dir))
    out = tmp_path / "report.html"
    view = "metrics=BLEU-4&corruptions=neg_subj&refs=5"
    assert main(["report", "--view", view, "--output", str(out)]) == 0
    assert "judged under the rules tol:0.15|tie:1e-9" in out.read_text(encoding="utf-8")
    exact = load_settings({}, cache_dir=cache_dir, tie_rule="exact")
    with pytest.raises(MuttlabError, match=r"judged under the rules tol:0.15\|tie:1e-9, not under this report's "
                                           r"\(tol:0.15\|tie:exact\); add run=1"):
        build_report(exact, view)
    assert main(["report", "--view", view + "&run=1", "--tie-rule", "exact", "--output", str(out)]) == 0
    assert "judged under the rules tol:0.15|tie:exact" in out.read_text(encoding="utf-8")


def test_drilldown_report_from_the_cli(tmp_path, monkeypatch, cache_dir):
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache_dir))
    out = tmp_path / "report.html"
    code = main(["report", "--view", "/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5&show=all",
                 "--output", str(out)])
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert "Drill-down: BLEU-4 on Negated Subject, 5 references" in text
    assert "<script src=" not in text and len(text) > 3_000_000  # plotly.js inlined (4.7 MB)
    (figure,) = figures_in_html(text)
    assert figure_title(figure) == "Margins: BLEU-4 on Negated Subject, 5 references"


def test_report_of_an_empty_view_is_a_clear_error(sample_settings):
    with pytest.raises(MuttlabError, match="no metric is called 'NO-SUCH'"):
        build_report(sample_settings, "metrics=NO-SUCH&refs=5")
    with pytest.raises(MuttlabError, match="selects no cell"):
        build_report(sample_settings, "metrics=BLEU-4&refs=7")


# --------------------------------------------------------------------------- a report equals its view

def _assert_report_equals_page(query: dict[str, str]) -> str:
    from tests.dashboard.conftest import open_link, press, shown_errors

    at = open_link("drilldown", query)
    for button in ("dd-score", "dd-vs-score"):  # a challenge set's scores start from their button, not the link
        if [b for b in at.button if b.key == button]:
            at = press(at, button)
    assert not shown_errors(at)
    document = build_report(load_settings(), urlencode({**query, "page": "drilldown"}))
    tables = html_tables(document)
    # Every labelled number: the cell's counts, and the comparison's when the view has vs=.
    reported = {label: value for label, value in tables["counts"] + tables.get("comparison", [])}
    assert reported == {m.label: m.value for m in at.metric}
    assert ("comparison" in tables) == ("vs" in query)
    shown_line = next(m.value for m in at.markdown if m.value.endswith("trials shown")).replace("**", "")
    assert f'<p class="shown">{shown_line}: ' in document
    # The same trials in the same order: the page's table of every shown trial (over its pages) and the report's.
    rows = tables["trials"]
    header, body = rows[0], rows[1:]
    at.session_state["dd-table-open"] = True  # the page's table of the shown trials, sent once opened
    at.run()
    page_table = next(d.value for d in at.dataframe if "human_score" in d.value.columns)
    assert [r[header.index("trial")] for r in body] == list(page_table["trial"])
    # The numbers of the cards on the first page, character for character.
    cards = trial_cards(at)
    assert cards and [card["numbers"] for card in cards] == [
        {k: r[header.index(k)] for k in ("original", "corruption", "margin")} for r in body[:len(cards)]]
    if "vs" in query:
        assert [card["vs"]["margin"] for card in cards] == [r[header.index(f"{query['vs']} margin")]
                                                           for r in body[:len(cards)]]
        assert [card["vs"]["verdict"] for card in cards] == [r[header.index(f"{query['vs']} verdict")]
                                                            for r in body[:len(cards)]]
    return document


def test_a_mutt_cell_report_with_search_passes_and_a_comparison_equals_the_page(app_env):
    _assert_report_equals_page({"metric": "BLEU-4", "corruption": "passive", "refs": "5", "q": "man",
                                "show": "passes", "vs": "ROUGE-L"})
    _assert_report_equals_page({"metric": "BLEU-4", "corruption": "det_sub", "refs": "5", "vs": "ROUGE-L",
                                "show": "only-vs"})


def test_a_report_writes_margins_as_the_page_does(app_env):
    # The reported case: CIDEr-D scores passive/51's original 0 and its passive 2.65e-05; under the Difference
    # rule that is a margin of 0.15 - 2.65e-05 / 1e-9, which the report printed (`.4g`) as -2.65e+04.
    document = _assert_report_equals_page({"metric": "CIDEr-D", "corruption": "passive", "refs": "5",
                                           "show": "all"})
    rows = html_tables(document)["trials"]
    header = rows[0]
    margins = {r[header.index("trial")]: r[header.index("margin")] for r in rows[1:]}
    assert margins["passive/51"] == "orig = 0, Δ = 2.65e-05"
    assert not any(re.search(r"e\+0[4-9]", m) for m in margins.values())


def test_a_challenge_set_phenomenon_report_equals_the_page(app_env):
    negation = {"suite": "file:demetr/dataset/critical_id8_negation.json", "corruption": "critical_id8_negation"}
    _assert_report_equals_page({**negation, "metric": "chrF", "q": "not", "show": "all"})
    _assert_report_equals_page({**negation, "metric": "chrF", "vs": "sentBLEU", "show": "only-vs"})
