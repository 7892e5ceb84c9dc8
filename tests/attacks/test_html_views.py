"""Attacks through the views the dashboard draws, where a name or text someone else chose must arrive as text,
never as markup:

- the Published vs measured table (HTML of its own, ``st.html``) draws the published-numbers file's text (source,
  metric names, reasons), and a server recomputes it from its data dir's copy of that file, which anyone who can
  write the data dir controls;
- every figure (plotly, which reads ``<a href>``, ``<br>``, ``<b>``..., entities, ``%{...}`` templates and
  ``$...$`` TeX in the text it draws) names metrics (a user's metric plug-in chooses the name), corruption types
  and phenomena (an uploaded suite's), trial ids (a visitor's own sentences' ids) in titles, axes, legend entries,
  cell labels and hovers: the Drill-down's margins and comparison, the Severity curves, Human judgments'
  histograms and correlation heatmap, the Correlation studies, the Playground, Learned metrics, the grid's heatmap
  (download and report). The visitor who reads the page is the one the markup must fail against.

(The trial cards: ``tests/attacks/test_user_suites.py::test_markup_in_sentences_stays_text``; the same figures
drawn by plotly.js in Chromium: ``tests/access/test_chart_text.py``.)"""
from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from muttlab import api
from muttlab.dashboard import charts, services
from tests.dashboard.conftest import (app_env, app_settings, figures_drawn, html_bodies, open_link,  # noqa: F401
                                      open_page, read_as_plotly_shows, shown_errors)

MARKUP = '<img src=x onerror=alert(1)><script>alert(2)</script>"><a href="javascript:alert(3)">x</a>'

MD_LINKS = "[x](javascript:alert(4)) ![y](http://evil.example/y.png)"


def test_the_published_table_shows_markup_as_text(app_env, monkeypatch):
    frame = pd.DataFrame([{"study": f"MUTT {MD_LINKS}", "source": MARKUP, "metric": MARKUP, "subset": "neg_subj",
                           "refs": 5, "published": 61.0, "measured": 60.4, "difference": -0.6, "tolerance": 2.0,
                           "within": False, "reason": MARKUP}])
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


# Plotly reads these in a figure's text; what charts.text lets through is its own entities.
PLOTLY_MARKUP = MARKUP + "%{meta[0]}$x^2$&lt;b&gt;"
ENTITY = re.compile(r"&(?!amp;|lt;|gt;|#37;|#36;)")


def figure_strings(node, path=""):
    """Every string of a figure's JSON with its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from figure_strings(value, f"{path}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from figure_strings(value, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def assert_text_only(figure, *names: str) -> None:
    """No string of ``figure`` holds markup plotly would read: no tag but the hovers' own line break, no template
    but the cell labels' ``%{text}``, no TeX, no entity charts.text did not write; and each of ``names`` is
    there, drawn as exactly its characters."""
    found = list(figure_strings(figure.to_plotly_json()))
    for path, value in found:
        if path.endswith(".texttemplate"):
            assert value == "%{text}", (path, value)
            continue
        bare = value.replace("<br>", "")
        assert "<" not in bare and ">" not in bare and "%" not in bare and "$" not in bare, (path, value)
        assert not ENTITY.search(bare), (path, value)
    shown = [read_as_plotly_shows(value) for _, value in found]
    for name in names:
        assert any(name in text for text in shown), name


def name_figures(name: str) -> dict:
    """Every builder of charts.py, its names (metrics, corruptions, trials, titles, columns) ``name`` itself."""
    accuracy = pd.DataFrame([dict(metric=name, corruption=name, refs=5, n=10, passed=7, accuracy=70.0, ci_low=40.0,
                                  ci_high=90.0, tie_rate=0.0)])
    cell = pd.DataFrame({"margin": [-0.2, -0.1, 0.0, 0.3], "passed": [False, False, False, True]})
    joined = pd.DataFrame({"trial": [name, "t2"], "margin": [0.2, -0.1], "passed": [True, False],
                           "vs_margin": [-0.3, -0.2], "vs_passed": [False, False]})
    contingency = pd.DataFrame({f"{name} passes": [0, 0], f"{name} fails": [1, 1]},
                               index=[f"{name} passes", f"{name} fails"])
    curve = pd.DataFrame({"metric": [name] * 2, "strength": [1, 2], "n": [30, 30], "pass_rate": [50.0, 40.0],
                          "pass_ci_low": [30.0, 20.0], "pass_ci_high": [70.0, 60.0], "mean_drop": [0.2, 0.1],
                          "monotone": ["no: pass rate falls from strength 1 to 2"] * 2})
    histograms = pd.DataFrame({"variable": ["gold", "gold", name, name], "left": [1.0, 3.0, 0.0, 0.5],
                               "right": [3.0, 5.0, 0.5, 1.0], "count": [3, 4, 2, 5]})
    matrix = pd.DataFrame([[1.0, 0.25], [0.25, 1.0]], index=["gold", name], columns=["gold", name])
    table = pd.DataFrame({"metric": [name], "dataset": [name], "tau": [0.3], "ci_low": [0.2], "ci_high": [0.4]})
    sweep = pd.DataFrame({"metric": [name, name], "unit_size": [1, 2], "rho": [0.1, 0.2], "rho_low": [0.0, 0.1],
                          "rho_high": [0.2, 0.3]})
    verdicts = pd.DataFrame([dict(metric=name, corruption=name, s_orig=0.5, s_corr=0.4, passed=True)])
    scores = pd.DataFrame({"metric": [name, name], "candidate": [0, 1], "score": [0.5, 0.4]})
    history = pd.DataFrame({"epoch": [1, 2], name: [0.5, 0.4]})
    return {
        "accuracy_heatmap": charts.accuracy_heatmap(accuracy, {name: f"label {name}"}),
        "margin_histogram": charts.margin_histogram(cell, f"Margins: {name} on {name}"),
        "comparison_chart": charts.comparison_chart(contingency, joined, name, name, f"{name} vs {name}"),
        "severity_curves": charts.severity_curves(curve, name, name),
        "score_histograms": charts.score_histograms(histograms, name, f"gold {name}", f"{name} score", name),
        "correlation_heatmap": charts.correlation_heatmap(matrix, name, name),
        "correlation_bars": charts.correlation_bars(table, "tau", "ci_low", "ci_high", colour="dataset", title=name),
        "sweep_lines": charts.sweep_lines(sweep, "unit_size", "rho", "rho_low", "rho_high", title=name),
        "change_heatmap": charts.change_heatmap(verdicts, name),
        "sentence_scores": charts.sentence_scores(scores, [name, name]),
        "loss_curve": charts.loss_curve(history, name),
    }


@pytest.mark.parametrize("builder", list(name_figures("x")))
def test_every_figure_draws_a_name_as_its_characters(builder):
    name = f"my-metric{PLOTLY_MARKUP}"
    assert_text_only(name_figures(name)[builder], name)


def test_a_drilldown_figure_of_a_visitors_suite_shows_its_trial_ids_as_text(app_env):
    """Attack: a visitor's own sentences, ids that are markup, compared on the Drill-down by another visitor who
    opens the link: the margins' title and the comparison's hovers name them as text."""
    from tests.attacks.test_user_suites import SMALL_TYPES
    from tests.dashboard.test_mine_page import build, grid_links

    tag = "<a href=javascript:alert(1)>x</a>%{meta[0]}$x$"
    text = ("id,text,reference\n"
            f'"{tag}",A man is riding a horse in a field.,A man rides a horse.\n'
            "plain,Two dogs play in the snow.,Two dogs in snow.\n")
    at = build(open_page("mine"), text, types=SMALL_TYPES + ["det_sub"], metrics=["BLEU-4", "ROUGE-L"], refs=[1])
    assert not at.exception and not at.error
    link = next(link for link in grid_links(at) if link["corruption"] == "det_sub" and link["metric"] == "BLEU-4")
    drill = open_link("drilldown", {**link, "vs": "ROUGE-L", "show": "all"})
    assert not drill.exception and not drill.error
    margins, comparison = figures_drawn(drill)
    for figure in (margins, comparison):
        assert_text_only(figure)
    hovers = [read_as_plotly_shows(h).split("\n")[0] for trace in comparison.data[1:] for h in trace.hovertext]
    assert f"det_sub/{tag}" in hovers
