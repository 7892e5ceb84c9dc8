"""The Drill-down page: one cell's trials, failing first by margin, with diffs, filters and downloads."""
from __future__ import annotations

import html
import re

import numpy as np

from muttlab.engine import runner
from muttlab.sources import load_mutt_experiments
from tests.dashboard.conftest import html_bodies, html_tables, open_page, shown_errors, trial_cards

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
    # The margins are drawn as HTML (no chart scripts for the browser to fetch); the chart is the download.
    assert not at.get("vega_lite_chart")
    assert [b for b in html_bodies(at) if 'class="mutt-hist mutt-margins"' in b]


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
    # The comparison is drawn in HTML (the Vega-Lite chart is the download): its 2 x 2 table holds the paired
    # counts, b and c in the Okabe-Ito blue and vermillion, and each trial both scored is a point of its margins.
    assert not at.get("vega_lite_chart")
    body = next(b for b in html_bodies(at) if 'class="mutt-compare"' in b)
    counts = html_tables(body)["mutt-paired"]
    assert counts[0][1:] == ["ROUGE-L passes", "ROUGE-L fails"] and [r[0] for r in counts[1:]] == [
        "BLEU-4 passes", "BLEU-4 fails"]
    fills = re.findall(r'<td title="[^"]*" style="background: (#[0-9A-Fa-f]{6})', body)
    cells = {(fill, n) for fill, n in zip(fills, [n for row in counts[1:] for n in row[1:]])}
    both = int((wide["BLEU-4"] & wide["ROUGE-L"]).sum())
    neither = int((~wide["BLEU-4"] & ~wide["ROUGE-L"]).sum())
    assert cells == {("#999999", str(both)), ("#0072B2", str(len(only_bleu))), ("#D55E00", str(len(only_rouge))),
                     ("#999999", str(neither))}
    points = re.findall(r'class="mutt-pt" style="[^"]*background: (#[0-9A-Fa-f]{6})" title="([^"]*?): margin',
                        body)
    by_colour = {"#0072B2": set(only_bleu), "#D55E00": set(only_rouge)}
    margins = table.pivot(index="trial", columns="metric", values="margin")
    assert len(points) == int(np.isfinite(margins[["BLEU-4", "ROUGE-L"]].to_numpy(float)).all(axis=1).sum()) > 60
    for colour, trials in by_colour.items():
        assert {html.unescape(t) for c, t in points if c == colour} == {str(t) for t in trials}
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


def test_the_margins_histogram_draws_the_charts_bins(app_env, app_settings):
    """The HTML histogram above the cards has the bins of the chart it stands for (charts.margin_histogram, the
    download): per bin its fails and passes on hover, in proportion to the tallest bin; the engine's margins."""
    from muttlab.dashboard.charts import margin_axis, margin_bins

    at = open_page("drilldown", state={"drilldown_cell": CELL})
    table, _ = _engine_cell(app_settings)
    body = next(b for b in html_bodies(at) if 'class="mutt-hist mutt-margins"' in b)
    assert "Margins: BLEU-4 on Active-to-Passive, 5 references" in body
    margins, passed = table["margin"].to_numpy(float), table["passed"].to_numpy(bool)
    low, high, _ = margin_axis(margins)
    fails, edges = margin_bins(margins[~passed], low, high)
    passes, _ = margin_bins(margins[passed], low, high)
    hovers = re.findall(r'class="mutt-bin" title="margin (\S+) to (\S+): (\d+) fails?, (\d+) pass(?:es)?"', body)
    assert [(int(f), int(p)) for *_, f, p in hovers] == list(zip(fails.tolist(), passes.tolist()))
    assert [float(a) for a, *_ in hovers] == [float(f"{e:.3g}") for e in edges[:-1]]
    assert sum(int(f) + int(p) for *_, f, p in hovers) == np.isfinite(margins).sum() == 214
    assert f"fails ({int((~passed).sum())})" in body and f"passes ({int(passed.sum())})" in body
    tallest = max(int(f) + int(p) for *_, f, p in hovers)
    heights = [float(h) for h in re.findall(r'style="height: ([0-9.]+)%', body)]
    assert max(heights) == 100.0 or tallest == 0
    assert abs(sum(heights) - 100.0 * 214 / tallest) < 0.01 * len(heights)
