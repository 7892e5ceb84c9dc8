"""Attacks through the reports of the study pages: a name or text someone else chose (a metric plug-in's name, a
published-numbers file's source and reasons, which anyone who can write the data dir controls) arrives in the
downloaded HTML as text, never as markup. The reader of the report is the one the markup must fail against.

The document is written by one Jinja2 template with autoescape (``dashboard/templates/report.html.j2``); figures
go through plotly's JSON and :func:`muttlab.dashboard.charts.text`."""
from __future__ import annotations

import pandas as pd

from muttlab import api
from muttlab.dashboard.report_document import Section, render
from muttlab.dashboard.report_views import flickr_section, published_sections, severity_curve_section
from tests.dashboard.conftest import figures_in_html

MARKUP = '<img src=x onerror=alert(1)><script>alert(2)</script>"><a href="javascript:alert(3)">x</a>'
RAW = ("<img src=x", "<script>alert(2)", '<a href="javascript')


def _assert_text_only(document: str) -> None:
    for raw in RAW:
        assert raw not in document, raw
    assert "&lt;img src=x onerror=alert(1)&gt;" in document


def test_markup_in_published_names_and_reasons_is_text():
    frame = pd.DataFrame([{"study": MARKUP, "source": MARKUP, "metric": MARKUP, "subset": "neg_subj", "refs": 5,
                           "published": 61.0, "measured": 60.4, "difference": -0.6, "tolerance": 2.0,
                           "within": False, "reason": MARKUP}])
    document = render("published", "page=published", published_sections(frame, None, False, MARKUP, MARKUP))
    _assert_text_only(document)
    assert document.count("&lt;img src=x onerror=alert(1)&gt;") >= 5  # note, heading, source, metric, reason


def test_markup_in_a_metric_name_is_text_in_the_severity_and_flickr_reports():
    curve = api.snapshot("severity").content.table()
    curve["metric"] = curve["metric"].where(curve["metric"] != curve["metric"].iloc[0], MARKUP)
    flickr = api.snapshot("human").content.flickr.table.copy()
    flickr["metric"] = flickr["metric"].where(flickr["metric"] != flickr["metric"].iloc[0], MARKUP)
    document = render("severity", "page=severity", [
        severity_curve_section(curve, api.severity_default().corruption, "MUTT original", MARKUP),
        flickr_section(flickr, 0, 1, MARKUP)])
    _assert_text_only(document)
    names = [trace.name for figure in figures_in_html(document) for trace in figure.data]
    assert any("&lt;img" in (name or "") for name in names)  # the legend writes it as text (charts.text)


def test_markup_in_every_kind_of_block_is_text():
    frame = pd.DataFrame({MARKUP: [MARKUP], "accuracy": [50.0]})
    section = (Section().heading(MARKUP).heading(MARKUP, 3).note(MARKUP, code=MARKUP, css="shown")
               .numbers([(MARKUP, MARKUP)]).table(frame, MARKUP))
    document = render(MARKUP, MARKUP, [section])
    _assert_text_only(document)
    assert "<title>MUTT Lab report: &lt;img" in document
    assert not figures_in_html(document)
    assert "Plotly" not in document


def test_markup_in_meta_evaluation_and_profile_links_never_reaches_their_reports(sample_settings):
    """A crafted link names a metric, pair or statistic made of markup: the link is refused (a plain-text error,
    which the page and the command line show as text), or the report holds the shipped view without the markup."""
    from urllib.parse import quote

    from muttlab.dashboard.report import build_report
    from muttlab.errors import MuttlabError

    refused = 0
    for view in (f"/meta_eval?pair=zh-en&metric={quote(MARKUP)}", f"/meta_eval?statistic={quote(MARKUP)}",
                 f"/profile?metric={quote(MARKUP)}", f"/profile?metric=chrF&vs={quote(MARKUP)}"):
        try:
            document = build_report(sample_settings, view)
        except MuttlabError:
            refused += 1
            continue
        for raw in RAW:
            assert raw not in document, (view, raw)
    assert refused >= 1
