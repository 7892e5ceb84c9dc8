"""Reports of the study pages (Severity, Human judgments, Correlation studies, Published vs measured): each report
holds the figures the page draws for the same view, trace for trace, and its tables write the page's numbers as
the page's formatters write them (``muttlab.dashboard.report_views``)."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab import api
from muttlab.cli import main
from muttlab.dashboard.number_format import correlation_text, percent
from muttlab.dashboard.report import build_report
from muttlab.settings import load_settings
from tests.dashboard.conftest import (figure_title, figures_drawn, figures_in_html, html_bodies, html_tables,
                                      open_link, open_page, shown_errors)


def _values(array) -> list:
    return [] if array is None else np.asarray(array, dtype=object).tolist()


def _trace(trace) -> tuple:
    return (trace.type, trace.name, _values(getattr(trace, "x", None)), _values(getattr(trace, "y", None)),
            _values(getattr(trace, "z", None)))


def assert_same_figures(at, document: str) -> None:
    """The report draws the page's figures: same titles, same traces with the same points."""
    drawn, reported = figures_drawn(at), figures_in_html(document)
    assert drawn and len(drawn) == len(reported)
    for page_figure, report_figure in zip(drawn, reported):
        assert figure_title(page_figure) == figure_title(report_figure)
        assert [_trace(t) for t in page_figure.data] == [_trace(t) for t in report_figure.data]


def _column(table: list[list[str]], name: str) -> list[str]:
    header, *rows = table
    return [row[header.index(name)] for row in rows]


def test_the_severity_report_is_the_pages_first_curve(app_env, app_settings):
    at = open_page("severity")
    at.session_state["sev-table-open"] = True
    at.run()  # figures and the folded table come in the page's second run
    assert not shown_errors(at)
    document = build_report(app_settings, "page=severity")
    assert_same_figures(at, document)
    shown = at.dataframe[0].value
    table = html_tables(document)["severity"]
    assert _column(table, "metric") == shown["metric"].tolist()
    assert _column(table, "pass_rate") == [percent(v) for v in shown["pass_rate"]]
    caption = next(b for b in html_bodies(at) if " take " in b and "n = " in b)
    shipped = api.snapshot("severity").content
    said = f"n = {shipped.kept} of {shipped.sentences} MUTT original sentences take"
    assert said in caption and said in document


def test_the_human_report_is_the_pages_view(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")  # the shipped study, as the demo shows it
    at = open_page("human")
    at.session_state["human-matrix-table-open"] = True
    at.run()
    assert not shown_errors(at)
    document = build_report(load_settings(), "page=human")
    assert_same_figures(at, document)
    counts = {label: value for label, value in html_tables(document)["counts"]}
    # The page's label is Markdown, escaped (``METEOR-1.5\: mean``); it reads as the report's text.
    assert counts == {m.label.replace("\\", ""): m.value for m in at.metric}
    # MUTT data: 336 of the 543 listed neg_subj pairs have an experiment trial (data/README.md counts).
    assert counts["pairs"] == "336"
    matrix = next(d.value for d in at.dataframe if d.value.columns[0] == "")
    reported = html_tables(document)["matrix"]
    assert _column(reported, "TERp") == [correlation_text(v) for v in matrix["TERp"]]


def test_the_correlation_report_is_the_pages_view(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("correlation")
    at.run()
    assert not shown_errors(at)
    document = build_report(load_settings(), "/correlation")
    assert_same_figures(at, document)  # the Flickr8K bars, the unit study's bars and its three sweeps
    flickr = next(d.value for d in at.dataframe if "signature" in d.value.columns)
    assert _column(html_tables(document)["flickr"], "tau") == [correlation_text(v) for v in flickr["tau"]]
    units = next(d.value for d in at.dataframe if "rho" in d.value.columns and "sweep" not in d.value.columns)
    assert _column(html_tables(document)["units"], "rho") == [correlation_text(v) for v in units["rho"]]


def test_the_published_report_holds_the_pages_tables(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("published")
    assert not shown_errors(at)
    document = build_report(load_settings(), "page=published")
    tables = [body for body in html_bodies(at) if 'class="mutt-published"' in body]
    assert tables and all(body in document for body in tables)
    counts = {label: value for label, value in html_tables(document)["counts"]}
    assert counts == {m.label: str(m.value) for m in at.metric}
    assert "ties judged exactly, as the paper did (tie:exact)" in document


def test_the_meta_evaluation_report_is_the_pages_view(app_env, app_settings):
    query = {"pair": "zh-en", "statistic": "acc_eq_item", "metric": "TER"}
    at = open_link("meta_eval", query)
    at.run()  # figures come in the page's second run
    assert not shown_errors(at)
    document = build_report(app_settings, "/meta_eval?" + "&".join(f"{k}={v}" for k, v in query.items()))
    assert_same_figures(at, document)  # the scatter of TER's pairs, with its ε band
    shown = next(d.value for d in at.dataframe if "cluster" in d.value.columns)
    table = html_tables(document)["ranking"]
    assert [row for row in table[1:]] == shown.astype(str).values.tolist()


def test_the_profile_report_is_the_pages_view(app_env, app_settings):
    at = open_link("profile", {"metric": "chrF", "vs": "TER"})
    at.run()
    assert not shown_errors(at)
    document = build_report(app_settings, "/profile?metric=chrF&vs=TER")
    assert_same_figures(at, document)  # MUTT, DEMETR per severity, MSLC24-B and MQM, both metrics' dots
    shipped = api.snapshot("profiles").content.profiles
    mutt = html_tables(document)["profile-mutt"]
    assert len(mutt) - 1 == sum(len(shipped[m].tables()["mutt"]) for m in ("chrF", "TER"))


def test_the_command_line_writes_a_study_pages_report(tmp_path, monkeypatch, cache_dir):
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache_dir))
    out = tmp_path / "published.html"
    assert main(["report", "--view", "/published?study=mutt_accuracy&off=1", "--output", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    frame = api.snapshot("published").content.frame
    off = frame[(frame["study"] == "mutt_accuracy") & ~frame["within"].astype(bool)]
    assert text.count("<tr") >= len(off) and "Published vs measured" in text


@pytest.mark.parametrize("view", ["page=annotate", "/playground?x=1"])
def test_pages_without_a_report_are_named(sample_settings, view):
    from muttlab.errors import MuttlabError

    with pytest.raises(MuttlabError, match="reports cover the views run, drilldown, severity, published, human"):
        build_report(sample_settings, view)
