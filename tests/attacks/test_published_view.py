"""Attacks through the Published vs measured table: the page draws the published-numbers file's text (source,
metric names, reasons) as HTML, and a server recomputes it from its data dir's copy of that file, which
anyone who can write the data dir controls. Every cell must arrive as text, never as markup."""
from __future__ import annotations

import pandas as pd

from muttlab import api
from muttlab.dashboard import services
from tests.dashboard.conftest import app_env, app_settings, html_bodies, open_page, shown_errors  # noqa: F401

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
