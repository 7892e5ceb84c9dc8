"""The Meta-evaluation page: the shipped TED results (ranking with clusters and baselines, the scatter of Δmetric
against ΔMQM with the band |Δm| ≤ ε, one segment's outputs with their MQM errors) and an uploaded study.

The numbers drawn are the shipped snapshot's (``api.shipped_meta_evaluation``) and the API's; the constant
baseline and the count of pairs are also checked against the MQM scores themselves (docs/meta_eval.md: the
constant metric ties every pair, so its item-grouped acc*_eq is the share of pairs the experts tie, averaged
over items — Deutsch, Foster & Freitag 2023, §4)."""
from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from muttlab import api
from muttlab.dashboard.number_format import correlation_text, fmt_score
from tests.dashboard.conftest import figures_drawn, html_bodies, open_link, open_page, shown_errors
# `muttlab serve` with the data dir (the segments' texts are in its MQM files), one for this module.
from tests.dashboard.test_browser_audiences import research_server  # noqa: F401 (fixture)


def ranking(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "rank" in d.value.columns)


def human_tie_share(gold: np.ndarray) -> tuple[float, int]:
    """(the share of item-grouped pairs the humans tie, averaged over items that have a pair; the pairs), from
    the MQM matrix alone."""
    shares, pairs = [], 0
    for column in gold.T:
        judged = column[~np.isnan(column)]
        n = len(judged)
        if n < 2:
            continue
        tied = sum(int(k) * (int(k) - 1) // 2 for k in np.unique(judged, return_counts=True)[1])
        shares.append(tied / (n * (n - 1) // 2))
        pairs += n * (n - 1) // 2
    return float(np.mean(shares)), pairs


def test_a_link_opens_the_shipped_ranking_scatter_and_segment(app_env, app_settings):
    at = open_link("meta_eval", {"pair": "zh-en", "statistic": "acc_eq_item", "metric": "TER", "segment": "12"})
    assert not shown_errors(at)
    result = api.shipped_meta_evaluation("zh-en", with_scores=True)
    table = ranking(at)
    # Every metric and both baselines, best first, each number the snapshot's as number_format writes it.
    assert table["metric"].tolist() == [m for m in result.ranking("acc_eq_item") if m in result.values]
    assert {"constant baseline", "random baseline"} <= set(table["metric"])
    for row in table.itertuples(index=False):
        assert row.acc_eq_item == correlation_text(result.value(row.metric, "acc_eq_item"))
        assert row.ε == fmt_score(result.epsilon(row.metric, "acc_eq_item"))
        assert row.cluster == str(result.cluster(row.metric, "acc_eq_item"))
    share, n_pairs = human_tie_share(result.gold)
    constant = table.set_index("metric").loc["constant baseline"]
    assert constant["acc_eq_item"] == correlation_text(share)
    # The metrics that cannot score zh-en, each with its reason.
    skipped = next(d.value for d in at.dataframe if list(d.value.columns) == ["metric", "reason"])
    assert dict(zip(skipped["metric"], skipped["reason"])) == result.skipped

    (scatter,) = figures_drawn(at)
    pairs = api.meta_pairs(result, "TER", "acc_eq_item")
    assert len(pairs) == n_pairs == sum(len(t.x) for t in scatter.data)
    right, wrong = scatter.data
    for trace, part in ((right, pairs[pairs["right"]]), (wrong, pairs[~pairs["right"]])):
        assert np.asarray(trace.x) == pytest.approx(part["delta_human"].to_numpy())
        assert np.asarray(trace.y) == pytest.approx(part["delta_metric"].to_numpy())
        assert list(trace.customdata) == part["item"].tolist()
    epsilon = result.epsilon("TER", "acc_eq_item")
    if epsilon > 0:
        (band,) = scatter.layout.shapes[:1]
        assert (band.y0, band.y1) == (-epsilon, epsilon)

    # Segment 12's outputs from the MQM files, each error span inside a mark, best first by MQM.
    outputs = api.segment_outputs(app_settings, "mqm-ted:zh-en", 12)
    page = "".join(html_bodies(at))
    as_read = html.unescape(re.sub(r"<[^>]+>", "", page))  # the text a reader sees, marks and all
    for row in outputs.itertuples(index=False):
        assert f"{row.system} {row.output} MQM {fmt_score(row.human)}" in as_read
        for error in row.errors:
            marked = html.escape(row.output[error["start"]:error["end"]])
            assert re.search(r'<mark class="mutt-(major|minor|other)" title="[^"]*">' + re.escape(marked), page)
    assert dict(at.query_params) == {"pair": "zh-en", "statistic": "acc_eq_item", "metric": "TER", "segment": "12"}


def test_the_ranking_downloads_as_it_is_shown(app_env, downloads):
    at = open_link("meta_eval", {"pair": "en-de", "statistic": "kendall_item"})
    assert not shown_errors(at)
    shown = ranking(at)
    rows = list(csv.reader(io.StringIO(downloads("me-ranking-csv").decode("utf-8"))))
    # Text cells that would start a spreadsheet formula (a negative τ) carry a leading quote (docs/security.md).
    assert rows[0] == list(shown.columns)
    assert [[c[1:] if c.startswith("'-") else c for c in row] for row in rows[1:]] == shown.astype(str).values.tolist()


def test_a_statistic_without_epsilon_or_interval_and_the_segment_picker(app_env):
    at = open_link("meta_eval", {"pair": "en-de"})
    at.selectbox(key="me-statistic").set_value("pearson_sys").run()
    at.number_input(key="me-segment").set_value(40).run()
    assert not shown_errors(at)
    result = api.shipped_meta_evaluation("en-de")
    table = ranking(at)
    assert "ε" not in table.columns and "95% interval" not in table.columns
    assert table["pearson_sys"].tolist() == [correlation_text(result.value(m, "pearson_sys")) for m in table["metric"]]
    # METEOR-1.5 scores English only: on en-de it is listed with why, never ranked.
    skipped = next(d.value for d in at.dataframe if list(d.value.columns) == ["metric", "reason"])
    assert "METEOR-1.5" in set(skipped["metric"]) and "METEOR-1.5" not in set(table["metric"])
    assert (at.query_params["statistic"], at.query_params["segment"]) == ("pearson_sys", "40")


def test_without_a_data_dir_the_shipped_numbers_show_and_the_texts_do_not(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("meta_eval")
    assert not shown_errors(at)
    result = api.shipped_meta_evaluation("en-de")
    assert ranking(at)["metric"].iloc[0] == result.ranking("acc_eq_item")[0]
    assert any("data dir" in i.value for i in at.info)


def judgments_file(settings, items: int = 40) -> bytes:
    """The first ``items`` en-de TED segments of four systems as the generic JSONL format (docs/meta_eval.md)."""
    judged = api.load_judgments(settings, "mqm-ted:en-de")
    lines = []
    for i in range(items):
        for s in range(4):
            if np.isnan(judged.gold[s, i]):
                continue
            lines.append(json.dumps({"item": judged.items[i], "system": judged.systems[s],
                                     "hypothesis": judged.hypotheses[s][i], "reference": judged.references[i][0],
                                     "score": float(judged.gold[s, i]), "lang": "en-de"}))
    return ("\n".join(lines) + "\n").encode()


def test_an_uploaded_study_is_ranked_and_drawn_like_the_shipped_one(app_env, app_settings):
    data = judgments_file(app_settings)
    at = open_page("meta_eval")
    at.radio(key="me-source").set_value("upload").run()
    at.file_uploader(key="me-upload").set_value(("mine.jsonl", data, "application/json")).run()
    at.multiselect(key="me-metrics").set_value(["chrF", "sentBLEU"]).run()
    assert not ranking_shown(at)  # a click scores it
    at.button(key="me-score").click().run()
    assert not shown_errors(at)
    expected = api.meta_evaluate(app_settings, data, ["chrF", "sentBLEU"], keep_scores=True)
    table = ranking(at)
    assert table["metric"].tolist() == [m for m in expected.ranking("acc_eq_item") if m in expected.values]
    assert table["acc_eq_item"].tolist() == [correlation_text(expected.value(m, "acc_eq_item"))
                                             for m in table["metric"]]
    share, n_pairs = human_tie_share(expected.gold)
    assert table.set_index("metric").loc["constant baseline", "acc_eq_item"] == correlation_text(share)
    (scatter,) = figures_drawn(at)
    assert sum(len(t.x) for t in scatter.data) == n_pairs
    pairs = api.meta_pairs(expected, "chrF")
    assert sorted(np.concatenate([t.y for t in scatter.data])) == pytest.approx(sorted(pairs["delta_metric"]))


def ranking_shown(at) -> bool:
    return any("rank" in d.value.columns for d in at.dataframe)


# --------------------------------------------------------------------------- in Chromium

# A point of the scatter with no other within 8 px (a click selects it alone), among the leftmost and rightmost
# inside the axes: its page coordinates and its segment.
ISOLATED_POINT = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const points = [];
  gd._fullData.forEach((trace) => {
    for (let i = 0; i < trace.x.length; i++) {
      points.push({px: xa._offset + xa.d2p(trace.x[i]), py: ya._offset + ya.d2p(trace.y[i]),
                   segment: Number(trace.customdata[i])});
    }
  });
  const inside = points.filter((a) => a.px > xa._offset + 10 && a.px < xa._offset + xa._length - 10
    && a.py > ya._offset + 10 && a.py < ya._offset + ya._length - 10).sort((a, b) => a.px - b.px);
  const ends = inside.slice(0, 30).concat(inside.slice(-30));
  const alone = ends.find((a) => points.every((b) => b === a || Math.hypot(a.px - b.px, a.py - b.py) > 8));
  return alone ? {x: box.x + alone.px, y: box.y + alone.py, segment: alone.segment, points: points.length}
               : {points: points.length};
}"""


@pytest.mark.browser
def test_a_link_opens_the_page_and_a_click_on_a_pair_opens_its_segment(research_server, browser):
    from playwright.sync_api import expect

    from tests.dashboard.test_browser import ARTIFACTS, EXCEPTION

    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.set_default_timeout(180_000)
    page.goto(f"{research_server}/meta_eval?pair=zh-en&statistic=acc_eq_item&metric=chrF&segment=3")
    expect(page.get_by_role("heading", name="Meta-evaluation")).to_be_visible()
    expect(page.get_by_text("constant baseline").first).to_be_visible()
    page.locator(".js-plotly-plot .main-svg").first.wait_for()
    page.locator(".mutt-output").first.wait_for()
    point = page.evaluate(ISOLATED_POINT)
    assert point["points"] == len(api.meta_pairs(api.shipped_meta_evaluation("zh-en", with_scores=True), "chrF"))
    assert "segment" in point and point["segment"] != 3, point
    page.mouse.click(point["x"], point["y"])
    expect(page).to_have_url(re.compile(rf"segment={point['segment']}(&|$)"))
    segment = page.get_by_label(re.compile(r"Segment \(0–\d+\)"))
    expect(segment).to_have_value(str(point["segment"]))
    expect(page.locator(".mutt-output").first).to_be_visible()
    assert page.locator(EXCEPTION).count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "meta-eval-segment.png"), full_page=True)
    page.close()


def test_overlapping_error_spans_are_cut_and_every_text_escaped():
    """Two raters' spans over "x<y & z" (characters 0-3 and 2-7), the second's category holding a quote: each piece
    escaped, the overlap marked by the more severe span with both in its title (written out by hand)."""
    from muttlab.dashboard.error_spans import highlighted

    spans = [{"start": 0, "end": 3, "severity": "Minor", "category": "Fluency", "rater": "r1"},
             {"start": 2, "end": 7, "severity": "Major", "category": 'Acc"uracy', "rater": "<r2>"}]
    assert highlighted("x<y & z!", spans) == (
        '<mark class="mutt-minor" title="Minor Fluency (r1)">x&lt;</mark>'
        '<mark class="mutt-major" title="Minor Fluency (r1); Major Acc&quot;uracy (&lt;r2&gt;)">y</mark>'
        '<mark class="mutt-major" title="Major Acc&quot;uracy (&lt;r2&gt;)"> &amp; z</mark>!')
    assert highlighted("<b>", []) == "&lt;b&gt;"
