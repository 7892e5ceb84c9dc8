"""`muttlab report`: a dashboard link becomes one offline HTML file (plotly embedded, text escaped)."""
from __future__ import annotations

import pytest

from muttlab.cli import main
from muttlab.dashboard.report import build_report, parse_view
from muttlab.errors import MuttlabError


def test_parse_view_accepts_links_paths_and_query_strings(sample_settings):
    assert parse_view(sample_settings, "http://host:8501/drilldown?metric=BLEU-4&refs=5").page == "drilldown"
    view = parse_view(sample_settings, "metrics=BLEU-4,TER&refs=5")
    assert view.page == "run" and view.values("metrics") == ["BLEU-4", "TER"]
    assert parse_view(sample_settings, "page=drilldown&metric=TER").params == {"page": "drilldown", "metric": "TER"}
    with pytest.raises(MuttlabError, match="no report for the page"):
        parse_view(sample_settings, "/annotate?pair=3")


def test_precomputed_grid_report_embeds_plotly(sample_settings):
    document = build_report(sample_settings, "metrics=BLEU-4&corruptions=neg_subj&refs=5")
    assert "plotly.js v" in document  # the library's own banner: it is inlined
    assert "<script src=\"https://cdn" not in document
    assert "BLEU-4" in document and "muttlab " in document and "CC BY-NC-SA 3.0" in document


def test_drilldown_report_from_the_cli(tmp_path, monkeypatch, cache_dir):
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache_dir))
    out = tmp_path / "report.html"
    code = main(["report", "--view", "/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5&show=all",
                 "--output", str(out)])
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert "Drill-down: BLEU-4 on Negated Subject, 5 references" in text
    assert "<script src=\"https://cdn" not in text and len(text) > 1_000_000  # plotly.js is ~3.5 MB


def test_report_of_an_empty_view_is_a_clear_error(sample_settings):
    with pytest.raises(MuttlabError, match="no metric is called 'NO-SUCH'"):
        build_report(sample_settings, "metrics=NO-SUCH&refs=5")
    with pytest.raises(MuttlabError, match="selects no cell"):
        build_report(sample_settings, "metrics=BLEU-4&refs=7")
