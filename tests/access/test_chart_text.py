"""Names a user controls (a metric from their metric path, a corruption from an uploaded suite, a pair key) are
drawn by plotly as characters, never as its subset of HTML: in every chart, in titles, tick labels, legend
entries, hover text and subplot titles. Checked in the figure's JSON, and in real Chromium with plotly.js."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from muttlab.dashboard import charts
from tests.dashboard.conftest import browser  # noqa: F401 (the shared Chromium fixture)

LINK = '<a href="http://127.0.0.1:9/a">x</a>'
IMAGE = '<img src="http://127.0.0.1:9/i.png">'
METRIC = f"my-metric{LINK}"
CORRUPTION = f"upload{IMAGE}"


def figures():
    accuracy = pd.DataFrame([dict(metric=METRIC, corruption=CORRUPTION, refs=5, n=10, passed=7, accuracy=70.0,
                                  ci_low=40.0, ci_high=90.0, tie_rate=0.0)])
    verdicts = pd.DataFrame([dict(metric=METRIC, corruption=CORRUPTION, s_orig=0.5, s_corr=0.4, passed=True)])
    scores = pd.DataFrame(dict(metric=[METRIC, METRIC], candidate=[0, 1], score=[0.5, 0.4]))
    matrix = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=["gold", METRIC], columns=["gold", METRIC])
    table = pd.DataFrame(dict(metric=[METRIC], dataset=[CORRUPTION], tau=[0.3], ci_low=[0.2], ci_high=[0.4]))
    sweep = pd.DataFrame(dict(metric=[METRIC, METRIC], unit_size=[1, 2], rho=[0.1, 0.2]))
    cell = pd.DataFrame(dict(margin=[0.1, -0.2, 0.3], passed=[True, False, True]))
    history = pd.DataFrame({"epoch": [1, 2], f"loss{IMAGE}": [0.5, 0.4]})
    return {
        "accuracy_heatmap": charts.accuracy_heatmap(accuracy, {CORRUPTION: f"label {IMAGE}"}),
        "accuracy_heatmap_ids": charts.accuracy_heatmap(accuracy),
        "change_heatmap": charts.change_heatmap(verdicts, f"title {LINK}"),
        "sentence_scores": charts.sentence_scores(scores, ["candidate", CORRUPTION]),
        "correlation_heatmap": charts.correlation_heatmap(matrix, f"method{IMAGE}", title=f"pairs {LINK}"),
        "correlation_bars": charts.correlation_bars(table, "tau", "ci_low", "ci_high", colour="dataset"),
        "sweep_lines": charts.sweep_lines(sweep, "unit_size", "rho", title=METRIC),
        "margin_histogram": charts.margin_histogram(cell, f"Margins: {METRIC} on {CORRUPTION}"),
        "score_histograms": charts.score_histograms(pd.DataFrame(dict(
            variable=["gold", METRIC], left=[1.0, 0.1], right=[2.0, 0.2], count=[1, 1])), METRIC, f"gold {IMAGE}",
            METRIC),
        "loss_curve": charts.loss_curve(history),
    }


def drawn_strings(node, path=""):
    """Every string of a figure's JSON with its path, except ``customdata`` (handed back on a click, never drawn)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "customdata":
                yield from drawn_strings(value, f"{path}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from drawn_strings(value, f"{path}[{i}]")
    elif hasattr(node, "tolist"):
        yield from drawn_strings(node.tolist(), path)
    elif isinstance(node, str):
        yield path, node


@pytest.mark.parametrize("name", list(figures()))
def test_no_user_markup_reaches_a_figure(name):
    fig = figures()[name]
    strings = list(drawn_strings(fig.to_plotly_json()))
    leaks = [(p, s) for p, s in strings if "<a " in s or "<img" in s]
    assert not leaks, leaks
    # The names are still there, as entities plotly turns back into the characters.
    assert any("&lt;a href=" in s or "&lt;img src=" in s for _, s in strings), name


def test_heatmap_cells_still_carry_the_raw_metric_and_corruption():
    fig = figures()["accuracy_heatmap"]
    cells = [tuple(c) for trace in fig.data if trace.customdata is not None for c in trace.customdata]
    assert (METRIC, CORRUPTION, 5) in cells


def test_plain_round_trips_through_entities():
    import html

    for text in (LINK, IMAGE, "R&D <b>bold</b> &amp; 'q' \"dq\"", "&lt;already escaped&gt;"):
        assert html.unescape(charts.plain(text)) == text
        assert "<" not in charts.plain(text)


@pytest.mark.browser
def test_plotly_draws_the_names_as_characters_in_chromium(tmp_path, browser):
    """plotly.js itself: no link or image element, no request to the injected addresses, the text visible."""
    figs = figures()
    page_file = tmp_path / "charts.html"
    parts = [charts.offline_html(fig, full_html=False) if i == 0 else fig.to_html(include_plotlyjs=False,
                                                                                   full_html=False)
             for i, fig in enumerate(figs.values())]
    page_file.write_text("<html><body>" + "".join(parts) + "</body></html>", encoding="utf-8")
    requested: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_file.as_uri())
    page.wait_for_function("document.querySelectorAll('.main-svg').length >= %d" % (2 * len(figs)),
                           timeout=60_000)
    assert page.locator("svg a").count() == 0
    # Heatmaps are drawn as <image> with a data: URL of their own; none may point at the injected address.
    assert page.locator("img[src*='127.0.0.1:9'], svg image[href*='127.0.0.1:9']").count() == 0
    text = page.evaluate("Array.from(document.querySelectorAll('svg text')).map(t => t.textContent)")
    drawn = json.dumps(text)
    assert METRIC in text and any(CORRUPTION in t for t in text), drawn[:2000]
    assert any(IMAGE in t for t in text if t.startswith("label")), drawn[:2000]
    assert not [url for url in requested if "127.0.0.1:9" in url]
