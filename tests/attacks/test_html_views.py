"""Attacks through the views the dashboard draws as HTML of its own (``st.html``), where a name or text someone else
chose must arrive as text, never as markup:

- the Published vs measured table draws the published-numbers file's text (source, metric names, reasons), and a
  server recomputes it from its data dir's copy of that file, which anyone who can write the data dir controls;
- the Drill-down's margins histogram is titled with the metric's name, which a user's metric plug-in chooses;
- the Severity page's curves, the Human judgments page's histograms and correlation table, and the Drill-down's
  comparison of two metrics name the metrics (and the comparison its trials) the same way: key, titles, hovers,
  row and column heads.

(The trial cards: ``tests/attacks/test_user_suites.py::test_markup_in_sentences_stays_text``.)"""
from __future__ import annotations

import html
import re

import pandas as pd

from muttlab import api
from muttlab.dashboard import services
from tests.dashboard.conftest import (app_env, app_settings, html_bodies, html_start_tags, open_page,  # noqa: F401
                                      shown_errors)

MARKUP = '<img src=x onerror=alert(1)><script>alert(2)</script>"><a href="javascript:alert(3)">x</a>'

MD_LINKS = "[x](javascript:alert(4)) ![y](http://evil.example/y.png)"


def test_the_published_table_shows_markup_as_text(app_env, monkeypatch):
    frame = pd.DataFrame([{"study": f"MUTT {MD_LINKS}", "source": MARKUP, "metric": MARKUP, "subset": "neg_subj",
                           "refs": 5, "published": 61.0, "measured": 60.4, "difference": -0.6, "tolerance": 2.0,
                           "within": False, "reason": MARKUP}])
    monkeypatch.setattr(services, "reproduce_available", lambda: True)
    monkeypatch.setattr(services, "shipped_reproduction", lambda: None)
    monkeypatch.setattr(api, "reproduce", lambda settings, **options: type("Report", (), {"frame": frame})())
    at = open_page("published")
    at.button(key="pub-recompute").click().run()
    assert not shown_errors(at)
    tables = [body for body in html_bodies(at) if 'class="mutt-published"' in body]
    assert len(tables) == 1
    body = tables[0]
    assert "<img" not in body and "<script>alert" not in body and "<a " not in body
    assert body.count("&lt;img src=x onerror=alert(1)&gt;") == 3  # source, metric, reason
    # The study names the table's heading, a Markdown element: its link and image syntax is escaped too.
    heading = next(s.value for s in at.subheader if s.value.startswith("MUTT"))
    assert "[x](" not in heading and "![y](" not in heading and "evil.example" in heading


def test_the_margins_histogram_shows_a_metric_name_as_text():
    from muttlab.dashboard.margin_bars import margin_bars_html

    cell = pd.DataFrame({"margin": [-0.2, -0.1, 0.0, 0.3, float("nan")], "passed": [False, False, False, True, False]})
    body = margin_bars_html(cell, f"Margins: my-metric{MARKUP} on upload")
    tags = {tag for tag, _ in html_start_tags(body)}
    assert tags <= {"style", "div", "p", "span"}, tags
    title = re.search(r'<p class="mutt-hist-title">(.*?)</p>', body).group(1)
    assert html.unescape(title) == f"Margins: my-metric{MARKUP} on upload"  # character for character


def _attributes(body: str, name: str) -> list[str]:
    """Every value of attribute ``name`` in ``body``, as a browser reads it (entities decoded)."""
    return [attrs[name] for _, attrs in html_start_tags(body) if name in attrs]


def test_the_severity_curves_show_a_metric_name_as_text():
    from muttlab.dashboard.curves_html import severity_curves_html

    curve = pd.DataFrame({"metric": [f"my-metric{MARKUP}"] * 2, "strength": [1, 2], "n": [30, 30],
                          "pass_rate": [50.0, 40.0], "pass_ci_low": [30.0, 20.0], "pass_ci_high": [70.0, 60.0],
                          "mean_drop": [0.2, 0.1], "monotone": ["no: pass rate falls from strength 1 to 2"] * 2,
                          "signature": ["s"] * 2})
    body = severity_curves_html(curve, f"Typo{MARKUP}", f"words{MARKUP}")
    assert {tag for tag, _ in html_start_tags(body)} <= {"style", "div", "p", "span"}
    assert not [a for _, attrs in html_start_tags(body) for a in attrs if a in ("href", "src", "onerror")]
    key = re.search(r'<div class="mutt-key">(.*?)</div>', body).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", key)) == f"my-metric{MARKUP} (not monotone)"
    hovers = _attributes(body, "title")
    assert len(hovers) == 4 and all(h.startswith(f"my-metric{MARKUP} (not monotone), strength ") for h in hovers)
    title = re.search(r'<p class="mutt-curves-title">(.*?)</p>', body).group(1)
    assert html.unescape(title).startswith(f"Typo{MARKUP}: ")
    assert all(MARKUP in label for label in _attributes(body, "aria-label"))


def test_the_human_judgments_histograms_and_table_show_metric_names_as_text():
    from muttlab.dashboard.correlation_html import correlation_table_html
    from muttlab.dashboard.histogram_html import Series, histogram_html

    name = f"my-metric{MARKUP}"
    bars = histogram_html([0.0, 0.5, 1.0], [Series("sentence", "sentences", "#0072B2", [3, 4])],
                          title=f"{name} score of the corruption", x_name=f"{name} score", y_name="sentences",
                          axis_title=f"{name} score", key=False)
    assert {tag for tag, _ in html_start_tags(bars)} <= {"style", "div", "p", "span"}
    assert [h.split(" 0 to ")[0] for h in _attributes(bars, "title")][:1] == [f"{name} score"]
    assert html.unescape(re.search(r'<p class="mutt-hist-title">(.*?)</p>', bars).group(1)) == \
        f"{name} score of the corruption"
    matrix = pd.DataFrame([[1.0, 0.25], [0.25, 1.0]], index=["gold", name], columns=["gold", name])
    table = correlation_table_html(matrix, f"Pearson r{MARKUP}", f"title{MARKUP}")
    assert {tag for tag, _ in html_start_tags(table)} <= {"style", "div", "p", "span", "table", "thead", "tbody", "tr",
                                                          "th", "td"}
    heads = [html.unescape(h) for h in re.findall(r'<th scope="(?:col|row)">(.*?)</th>', table)]
    assert heads == ["gold", name, "gold", name]
    assert f"{name} × gold: Pearson r{MARKUP} = 0.250" in _attributes(table, "title")


def test_the_drilldown_comparison_shows_metric_names_and_trial_ids_as_text():
    from muttlab.dashboard.comparison_html import comparison_html

    metric, other, trial = f"mine{MARKUP}", f"theirs{MARKUP}", f"t{MARKUP}"
    joined = pd.DataFrame({"trial": [trial, "t2"], "margin": [0.2, -0.1], "passed": [True, False],
                           "vs_margin": [-0.3, -0.2], "vs_passed": [False, False]})
    contingency = pd.DataFrame({f"{other} passes": [0, 0], f"{other} fails": [1, 1]},
                               index=[f"{metric} passes", f"{metric} fails"])
    body = comparison_html(contingency, joined, metric, other, f"{metric} vs {other}")
    assert {tag for tag, _ in html_start_tags(body)} <= {"style", "div", "p", "span", "table", "thead", "tbody", "tr",
                                                         "th", "td"}
    assert not [a for _, attrs in html_start_tags(body) for a in attrs if a in ("href", "src", "onerror")]
    heads = [html.unescape(h) for h in re.findall(r'<th scope="(?:col|row)">(.*?)</th>', body)]
    assert heads == [f"{other} passes", f"{other} fails", f"{metric} passes", f"{metric} fails"]
    hovers = _attributes(body, "title")
    assert f"{trial}: margin 0.2 ({metric}), -0.3 ({other})" in hovers
    assert html.unescape(re.search(r'<p class="mutt-compare-title">(.*?)</p>', body).group(1)) == \
        f"{metric} vs {other}"
