"""Names a user controls (a metric from their metric path, a corruption from an uploaded suite, a trial id) are
drawn as characters, never as markup, in every figure: titles, tick labels, legend entries, cell labels and
hovers. Plotly reads a subset of HTML in the text it draws (``<a href>`` becomes a link in the SVG, ``<br>`` a new
line...), entities, ``%{...}`` templates and ``$...$`` TeX; :func:`muttlab.dashboard.charts.text` escapes each
(every figure's JSON: ``tests/attacks/test_html_views.py``). Here plotly.js itself draws the figures in real
Chromium, inlined as a download and a report inline it, where a name that closes the page's script must stay
text too."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from muttlab.dashboard import charts
from tests.attacks.test_html_views import assert_text_only
from tests.dashboard.conftest import browser  # noqa: F401 (the shared Chromium fixture)

LINK = '<a href="http://127.0.0.1:9/a">x</a>'
IMAGE = '<img src="http://127.0.0.1:9/i.png">'
SCRIPT = "</script><script>window.pwned = 1</script>"
METRIC = f"my-metric{LINK}{SCRIPT}%{{meta[0]}}$x$"
CORRUPTION = f"upload{IMAGE}<b>bold</b>"


def figures() -> dict:
    accuracy = pd.DataFrame([dict(metric=METRIC, corruption=CORRUPTION, refs=5, n=10, passed=7, accuracy=70.0,
                                  ci_low=40.0, ci_high=90.0, tie_rate=0.0)])
    verdicts = pd.DataFrame([dict(metric=METRIC, corruption=CORRUPTION, s_orig=0.5, s_corr=0.4, passed=True)])
    scores = pd.DataFrame(dict(metric=[METRIC, METRIC], candidate=[0, 1], score=[0.5, 0.4]))
    matrix = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=["gold", METRIC], columns=["gold", METRIC])
    table = pd.DataFrame(dict(metric=[METRIC], dataset=[CORRUPTION], tau=[0.3], ci_low=[0.2], ci_high=[0.4]))
    sweep = pd.DataFrame(dict(metric=[METRIC, METRIC], unit_size=[1, 2], rho=[0.1, 0.2]))
    cell = pd.DataFrame(dict(margin=[0.1, -0.2, 0.3], passed=[True, False, True]))
    joined = pd.DataFrame({"trial": [CORRUPTION, "t2"], "margin": [0.2, -0.1], "passed": [True, False],
                           "vs_margin": [-0.3, -0.2], "vs_passed": [False, False]})
    contingency = pd.DataFrame({f"{METRIC} passes": [0, 0], f"{METRIC} fails": [1, 1]},
                               index=[f"{CORRUPTION} passes", f"{CORRUPTION} fails"])
    curve = pd.DataFrame({"metric": [METRIC] * 2, "strength": [1, 2], "n": [30, 30], "pass_rate": [50.0, 40.0],
                          "mean_drop": [0.2, 0.1], "monotone": ["yes"] * 2})
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
        "comparison_chart": charts.comparison_chart(contingency, joined, METRIC, CORRUPTION, METRIC),
        "severity_curves": charts.severity_curves(curve, CORRUPTION, METRIC),
        "score_histograms": charts.score_histograms(pd.DataFrame(dict(
            variable=["gold", METRIC], left=[1.0, 0.1], right=[2.0, 0.2], count=[1, 1])), METRIC, f"gold {IMAGE}",
            METRIC),
        "loss_curve": charts.loss_curve(history),
    }


@pytest.mark.parametrize("name", list(figures()))
def test_the_names_are_escaped_for_plotly(name):
    assert_text_only(figures()[name], METRIC if name not in ("loss_curve",) else f"loss{IMAGE}")


@pytest.mark.browser
def test_plotly_draws_the_names_as_characters_in_chromium(tmp_path, browser):
    """plotly.js itself, inlined as a report inlines it: no link or image element, no request to the injected
    addresses, no script run from a name, no template filled, no TeX; the names visible as text, in a hover too."""
    figs = figures()
    page_file = tmp_path / "charts.html"
    # Its encoding declared, as every page the lab writes declares it (charts.offline_html, the reports): without it
    # Chromium guesses, and once read the middle dots of a hover as Windows-1252.
    page_file.write_text("<html><head><meta charset=\"utf-8\"></head><body>" + charts.embed_html(list(figs.values()))
                         + "</body></html>", encoding="utf-8")
    requested: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_file.as_uri())
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= %d" % len(figs),
                           timeout=120_000)
    assert page.evaluate("window.pwned") is None
    # (The toolbar's buttons are plotly's own links, outside the drawn figure; a heatmap is drawn as an image of
    # its own, a data: PNG.)
    assert page.locator(".js-plotly-plot .main-svg a, .js-plotly-plot img").count() == 0
    sources = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot image'))"
                            ".map(i => i.getAttribute('xlink:href') || i.getAttribute('href'))")
    assert sources and all(source.startswith("data:image/png;base64,") for source in sources)
    assert page.locator(".js-plotly-plot tspan[style*='bold']").count() == 0  # <b> read as bold: none
    text = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot svg text'))"
                         ".map(t => t.textContent)")
    drawn = json.dumps(text)
    assert METRIC in text, drawn[:3000]  # the heatmap's row label: every character, none read
    assert any(CORRUPTION in t for t in text) and any(f"label {IMAGE}" == t for t in text), drawn[:3000]
    assert f"Margins: {METRIC} on {CORRUPTION}" in text, drawn[:3000]
    # A cell's hover names the metric as text.
    cell = page.locator("#mutt-chart-0 .nsewdrag").first.bounding_box()
    page.mouse.move(cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2)
    hover = page.locator("#mutt-chart-0 .hoverlayer .hovertext")
    hover.wait_for(state="attached", timeout=10_000)
    said = hover.locator("text").first.text_content()
    assert said.startswith(f"{METRIC} · label {IMAGE} · 5 refs"), said
    assert hover.locator("a").count() == 0
    assert not [url for url in requested if "127.0.0.1:9" in url]
    assert page.evaluate("window.pwned") is None
