"""The Drill-down page: one cell's trials, failing first by margin, with diffs, filters and downloads."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.engine import runner
from muttlab.sources import load_mutt_experiments
from muttlab.dashboard.number_format import fmt_score
from tests.dashboard.conftest import (figure_title, figures_drawn, html_bodies, open_page, read_as_plotly_shows,
                                      shown_errors, trial_cards)

CELL = {"metric": "BLEU-4", "corruption": "passive", "refs": 5}


def _engine_cell(settings):
    suite = load_mutt_experiments(settings).select([CELL["corruption"]])
    table = runner.run(suite, [CELL["metric"]], [CELL["refs"]], settings).table
    return table, {t.id: t for t in suite.trials}


def test_cell_trials_failing_first_by_margin(app_env, app_settings):
    at = open_page("drilldown", state={"drilldown_cell": CELL})
    assert not shown_errors(at)
    table, trials = _engine_cell(app_settings)
    shown = {m.label: m.value for m in at.metric}
    # data/README.md: the passive set has 214 trials.
    assert shown["trials"] == "214"
    assert int(shown["passed"]) == int(table["passed"].sum())
    assert int(shown["failed"]) == int((~table["passed"]).sum())
    # The first card is the failing trial with the lowest margin, and its diff shows its sentences.
    worst = table[~table["passed"]].sort_values("margin", kind="stable").iloc[0]
    first = trial_cards(at)[0]
    assert first["trial"] == worst["trial"] and first["verdict"] == "fails"
    first_word_of_corruption = trials[worst["trial"]].corrupted.split()[0]
    assert first_word_of_corruption in first["diff"]
    # References are folded in each card, all five of them.
    assert first["references"] == list(trials[worst["trial"]].references[:5])
    assert "<summary>5 references</summary>" in next(b for b in html_bodies(at) if "mutt-card" in b)


def test_filters_by_verdict_and_text(app_env, app_settings):
    at = open_page("drilldown", state={"drilldown_cell": CELL})
    table, trials = _engine_cell(app_settings)
    at.segmented_control(key="dd-verdict").set_value("passes").run()
    assert f"**{int(table['passed'].sum())}** of 214 trials shown" in [m.value for m in at.markdown]
    at.segmented_control(key="dd-verdict").set_value("all").run()
    at.text_input(key="dd-query").input("guitar").run()
    expected = sum(1 for t in table["trial"]
                   if "guitar" in trials[t].original.lower() or "guitar" in trials[t].corrupted.lower())
    assert expected > 0
    assert f"**{expected}** of 214 trials shown" in [m.value for m in at.markdown]
    at.text_input(key="dd-query").input("no sentence says this").run()
    assert any("No trial matches" in i.value for i in at.info)


def test_table_download_and_chart(app_env):
    at = open_page("drilldown", state={"drilldown_cell": CELL})
    labels = [b.label for b in at.get("download_button")]
    assert "Download chart (HTML)" in labels and "Download CSV" not in labels and not at.dataframe
    at.session_state["dd-table-open"] = True  # the shown trials' table and its CSV, sent once opened
    at.run()
    assert [b.label for b in at.get("download_button")].count("Download CSV") == 1
    assert len(at.dataframe[0].value) == len(at.dataframe[0].value["trial"].unique()) > 0
    # The margins' figure is on the page, its download below it.
    (figure,) = figures_drawn(at)
    assert figure_title(figure) == "Margins: BLEU-4 on Active-to-Passive, 5 references"


def test_a_sessions_first_figure_comes_after_the_cards(app_env):
    """A browser that has drawn no figure yet gets the page without it (plotly's 4.7 MB script would hold the cards
    back), the figure's place kept at its height, and a fragment its timer reruns once the page is drawn; that
    rerun runs the page again with the figure (in Chromium: tests/dashboard/test_browser_paths.py waits for it)."""
    from muttlab.dashboard.ui import PAINT_PASS_KEY, PLOTLY_READY_KEY

    at = open_page("drilldown", state={"drilldown_cell": CELL}, plotly_ready=False)
    assert not shown_errors(at)
    assert not at.get("plotly_chart") and len(trial_cards(at)) == 15
    assert "Drawing the chart…" in [c.value for c in at.caption]
    assert at.session_state[PAINT_PASS_KEY] == "armed"  # declared at the page's end, with its first run
    assert "Download chart (HTML)" in [b.label for b in at.get("download_button")]
    at.session_state[PLOTLY_READY_KEY] = True  # what the fragment's rerun sets before it reruns the page
    at.run()
    (figure,) = figures_drawn(at)
    assert figure_title(figure) == "Margins: BLEU-4 on Active-to-Passive, 5 references"
    assert "Drawing the chart…" not in [c.value for c in at.caption]


def test_margins_stay_readable_when_the_original_scores_zero():
    from muttlab.dashboard.number_format import margin_text
    from muttlab.engine.verdict import judge
    from muttlab.trials import Expectation
    # TER-like case of the issue: s_orig = 0 makes the relative margin about -8.4e10.
    assert margin_text(0.0, 0.84, -8.4e10) == "orig = 0, Δ = 0.8400"
    assert margin_text(0.5, 0.25, 0.35) == "0.3500 (corruption -50.0% vs original)"
    # The reported case: a difference of 2.65e-05 over an original of 0 is a Difference-rule margin of
    # 0.15 - 2.65e-05 / 1e-9, which `.4g` printed as -2.65e+04.
    margin = float(judge([0.0], [2.65e-05], Expectation.ABOUT_SAME, True).margin[0])
    assert f"{margin:.4g}" == "-2.65e+04"
    assert margin_text(0.0, 2.65e-05, margin) == "orig = 0, Δ = 2.65e-05"


def test_a_margin_over_a_near_zero_original_says_no_relative_change():
    """The reported "margin -6.39e-05 (corruption +472770.8% vs original)": a near-zero original (BLEU-4's
    smoothing gives one with no 4-gram match about 1e-8; here 1.3516e-08) against a corruption of 6.3916e-05
    (orig > corr, so the margin is the better-signed difference, judge's own); a change relative to a near-zero
    score is noise."""
    from muttlab.dashboard.number_format import margin_text, relative_change
    from muttlab.engine.verdict import judge
    from muttlab.trials import Expectation

    s_orig, s_corr = 1.3516e-08, 6.3916e-05
    margin = float(judge([s_orig], [s_corr], Expectation.FIRST_BETTER, True).margin[0])
    assert (s_corr - s_orig) / s_orig > 4000  # what the card printed as "+472…%"
    assert relative_change(s_orig, s_corr) != relative_change(s_orig, s_corr)  # NaN
    assert margin_text(s_orig, s_corr, margin) == "orig ≈ 0 (1.35e-08), Δ = 6.39e-05"
    assert margin_text(0.001, 0.0015, -0.0005) == "-5.00e-04 (corruption +50.0% vs original)"


def test_paired_comparison_of_two_metrics_on_one_cell(app_env, app_settings):
    from tests.dashboard.conftest import open_link

    at = open_link("drilldown", {"metric": "BLEU-4", "corruption": "det_sub", "refs": "5", "vs": "ROUGE-L"})
    assert not shown_errors(at)
    table = runner.run(load_mutt_experiments(app_settings).select(["det_sub"]), ["BLEU-4", "ROUGE-L"], [5],
                       app_settings).table.pivot(index="trial", columns="metric", values="passed")
    only_a = int((table["BLEU-4"] & ~table["ROUGE-L"]).sum())
    only_b = int((~table["BLEU-4"] & table["ROUGE-L"]).sum())
    shown = {m.label: m.value for m in at.metric}
    assert shown["only BLEU-4 right / only ROUGE-L right"] == f"{only_a} / {only_b}"


def _cards(at) -> list[str]:
    """The trial ids of the cards on the page, in order."""
    return [card["trial"] for card in trial_cards(at)]


def test_each_side_of_a_comparison_is_browsable_with_its_cards_chart_and_csv(app_env, app_settings):
    from tests.dashboard.conftest import open_link

    link = {"metric": "BLEU-4", "corruption": "det_sub", "refs": "5", "vs": "ROUGE-L", "show": "only-vs"}
    at = open_link("drilldown", link)
    assert not shown_errors(at)
    table = runner.run(load_mutt_experiments(app_settings).select(["det_sub"]), ["BLEU-4", "ROUGE-L"], [5],
                       app_settings).table
    wide = table.pivot(index="trial", columns="metric", values="passed")
    bleu = table[table["metric"] == "BLEU-4"]

    def in_cell_order(trials) -> list[str]:  # failing first by BLEU-4's margin, ties in the run's order
        part = bleu[bleu["trial"].isin(set(trials))]
        return list(part.sort_values(["passed", "margin"], kind="stable")["trial"])

    only_rouge = wide.index[~wide["BLEU-4"] & wide["ROUGE-L"]]
    expected = in_cell_order(only_rouge)
    assert f"**{len(expected)}** of 65 trials shown" in [m.value for m in at.markdown]
    assert _cards(at) == expected[:15]
    assert at.segmented_control(key="dd-verdict").value == "only-vs"
    assert at.query_params["show"] == "only-vs" and at.query_params["vs"] == "ROUGE-L"
    # Each card says how the other metric judged it.
    assert [card["vs"]["verdict"] for card in trial_cards(at)] == ["passes"] * min(15, len(expected))
    assert {card["vs"]["metric"] for card in trial_cards(at)} == {"ROUGE-L"}
    at.segmented_control(key="dd-verdict").set_value("only-metric").run()
    only_bleu = wide.index[wide["BLEU-4"] & ~wide["ROUGE-L"]]
    assert f"**{len(only_bleu)}** of 65 trials shown" in [m.value for m in at.markdown]
    assert _cards(at) == in_cell_order(only_bleu)[:15]
    # The comparison's figure (the same as its download): its 2 x 2 table holds the paired counts, b and c in the
    # Okabe-Ito blue and vermillion, and each trial both scored is a point of its margins, coloured by its group.
    margins_figure, figure = figures_drawn(at)
    assert figure_title(margins_figure).startswith("Margins: BLEU-4 on ")
    table2, *groups = figure.data
    assert list(table2.x) == ["ROUGE-L passes", "ROUGE-L fails"] and list(table2.y) == ["BLEU-4 passes",
                                                                                          "BLEU-4 fails"]
    both = int((wide["BLEU-4"] & wide["ROUGE-L"]).sum())
    neither = int((~wide["BLEU-4"] & ~wide["ROUGE-L"]).sum())
    assert [list(r) for r in table2.text] == [[str(both), str(len(only_bleu))], [str(len(only_rouge)), str(neither)]]
    fills = dict(table2.colorscale)
    assert [[fills[z / 2.0] for z in row] for row in table2.z] == [["#999999", "#0072B2"], ["#D55E00", "#999999"]]
    margins = table.pivot(index="trial", columns="metric", values="margin")
    by_colour = {"#0072B2": set(only_bleu), "#D55E00": set(only_rouge)}
    drawn = {g.marker.color: {read_as_plotly_shows(h).split("\n")[0] for h in g.hovertext} for g in groups}
    assert sum(len(g.x) for g in groups) == int(
        np.isfinite(margins[["BLEU-4", "ROUGE-L"]].to_numpy(float)).all(axis=1).sum()) > 60
    for colour, trials in by_colour.items():
        assert drawn[colour] == {str(t) for t in trials}
    point = next(g for g in groups if g.marker.color == "#0072B2")
    trial = read_as_plotly_shows(point.hovertext[0]).split("\n")[0]
    assert read_as_plotly_shows(point.hovertext[0]).split("\n")[1:] == [
        f"margin, BLEU-4: {fmt_score(margins.loc[trial, 'BLEU-4'])}",
        f"margin, ROUGE-L: {fmt_score(margins.loc[trial, 'ROUGE-L'])}"]
    # The trials only one of the two gets right, as a table with its CSV, sent once its expander is opened.
    assert not [d for d in at.dataframe if "right" in d.value.columns]
    at.session_state["dd-compare-open"] = True
    at.run()
    disagreeing = next(d.value for d in at.dataframe if "right" in d.value.columns)
    assert sorted(disagreeing["trial"]) == sorted(list(only_rouge) + list(only_bleu))
    assert (disagreeing.set_index("trial").loc[list(only_rouge), "right"] == "ROUGE-L").all()


def test_a_trial_that_is_a_pair_of_the_store_links_to_its_editor(app_env, app_settings):
    from muttlab.pairs.store import open_store

    at = open_page("drilldown", state={"drilldown_cell": CELL})
    cards = _cards(at)
    assert len(cards) == 15 and not any(card["edit"] for card in trial_cards(at))
    by_id = {t.id: t for t in load_mutt_experiments(app_settings).of(CELL["corruption"])}
    with open_store(app_settings) as store:  # every card's trial but the first becomes a pair
        store.add([by_id[t] for t in cards[1:]], author="loader")
        ids = {t: store.get_by_key(t).id for t in cards[1:]}
    at.run()
    assert [card["edit"] for card in trial_cards(at)] == [None] + [f"annotate?pair={ids[t]}" for t in cards[1:]]


def test_the_margins_histogram_draws_the_engines_margins(app_env, app_settings):
    """The figure above the cards (the same as its download) bins the engine's margins of the cell: per bin its
    fails and passes, stacked, over the axis of charts.margin_axis; each bar hovers both counts."""
    from muttlab.dashboard.charts import margin_axis, margin_bins

    at = open_page("drilldown", state={"drilldown_cell": CELL})
    table, _ = _engine_cell(app_settings)
    (figure,) = figures_drawn(at)
    assert figure_title(figure) == "Margins: BLEU-4 on Active-to-Passive, 5 references"
    margins, passed = table["margin"].to_numpy(float), table["passed"].to_numpy(bool)
    low, high, _ = margin_axis(margins)
    fails, edges = margin_bins(margins[~passed], low, high)
    passes, _ = margin_bins(margins[passed], low, high)
    drawn_fails, drawn_passes = figure.data
    assert list(drawn_fails.y) == fails.tolist() and list(drawn_passes.y) == passes.tolist()
    assert np.asarray(drawn_fails.x) - drawn_fails.width / 2 == pytest.approx(edges[:-1])
    assert sum(drawn_fails.y) + sum(drawn_passes.y) == np.isfinite(margins).sum() == 214
    assert (drawn_fails.name, drawn_passes.name) == (f"fails ({int((~passed).sum())})",
                                                     f"passes ({int(passed.sum())})")
    for i in range(len(fails)):
        assert read_as_plotly_shows(drawn_fails.hovertext[i]) == (
            f"margin {fmt_score(edges[i])} to {fmt_score(edges[i + 1])}: {fails[i]} fails, {passes[i]} passes")
