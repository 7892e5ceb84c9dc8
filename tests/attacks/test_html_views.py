"""Attacks through the views the dashboard draws as HTML of its own (``st.html``), where a name or text someone else
chose must arrive as text, never as markup:

- the Published vs measured table draws the published-numbers file's text (source, metric names, reasons), and a
  server recomputes it from its data dir's copy of that file, which anyone who can write the data dir controls;
- the Drill-down's margins histogram is titled with the metric's name, which a user's metric plug-in chooses.

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
    title = re.search(r'<p class="mutt-margins-title">(.*?)</p>', body).group(1)
    assert html.unescape(title) == f"Margins: my-metric{MARKUP} on upload"  # character for character
