"""Names a user controls (a metric from their metric path, a corruption from an uploaded suite, a pair key) are
drawn as characters, never as markup, in every chart: titles, tick labels, legend entries and tooltips. Vega
draws text as text, so the names travel unchanged, but only as data values and titles: never as a field name
(which Vega reads as a path) or inside an expression. Checked in the specs, and in real Chromium with Vega
inlined as a download and a report inline it, where a name that closes the page's script must stay text too."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from muttlab.dashboard import charts
from tests.dashboard.conftest import browser  # noqa: F401 (the shared Chromium fixture)

LINK = '<a href="http://127.0.0.1:9/a">x</a>'
IMAGE = '<img src="http://127.0.0.1:9/i.png">'
SCRIPT = "</script><script>window.pwned = 1</script>"
METRIC = f"my-metric{LINK}{SCRIPT}"
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


def strings(node, path=""):
    """Every string of a spec with its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from strings(value, f"{path}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from strings(value, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


# Where Vega reads a string as a path or as code rather than as text to draw.
READ_AS_CODE = (".field", ".expr", ".labelExpr", ".test", ".calculate", ".filter")


@pytest.mark.parametrize("name", list(figures()))
def test_names_are_data_never_fields_or_expressions(name):
    spec = charts.spec(figures()[name])
    found = list(strings(spec))
    code = [(p, s) for p, s in found if p.endswith(READ_AS_CODE) or ".field." in p]
    assert not [(p, s) for p, s in code if any(part in s for part in ("my-metric", "upload", "href", "<img"))], code
    # The names are there unchanged, to be drawn as the characters they are.
    assert any(LINK in s or IMAGE in s for _, s in found), name


@pytest.mark.browser
def test_vega_draws_the_names_as_characters_in_chromium(tmp_path, browser):
    """Vega itself, inlined as a report inlines it: no link or image element, no request to the injected
    addresses, no script run from a name, the text visible and in the tooltip as text."""
    figs = figures()
    page_file = tmp_path / "charts.html"
    page_file.write_text("<html><body>" + charts.embed_html(list(figs.values())) + "</body></html>",
                         encoding="utf-8")
    requested: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_file.as_uri())
    page.wait_for_function("document.querySelectorAll('.mutt-chart svg.marks').length >= %d" % len(figs),
                           timeout=60_000)
    assert page.evaluate("window.pwned") is None
    assert page.locator(".mutt-chart svg a, .mutt-chart img").count() == 0
    assert page.locator("svg image[href*='127.0.0.1:9']").count() == 0
    text = page.evaluate("Array.from(document.querySelectorAll('.mutt-chart svg text')).map(t => t.textContent)")
    drawn = json.dumps(text)
    assert METRIC in text and any(CORRUPTION in t for t in text), drawn[:2000]
    assert any(IMAGE in t for t in text if t.startswith("label")), drawn[:2000]
    # A cell's tooltip (vega-tooltip writes HTML) shows the names as text.
    page.locator("#mutt-chart-0 g.mark-text.role-mark text").first.hover()  # the number over the cell
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for(state="visible", timeout=10_000)
    assert METRIC in tooltip.inner_text()
    assert tooltip.locator("a, img, script").count() == 0
    assert not [url for url in requested if "127.0.0.1:9" in url]
    assert page.evaluate("window.pwned") is None
