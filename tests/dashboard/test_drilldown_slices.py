"""The Drill-down page's slices: the trials by their properties, the slices where the metric fails most, each a
link that opens the cell with its slice chosen."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from muttlab import api
from muttlab.dashboard import cell_view
from muttlab.engine import runner
from muttlab.sources import load_mutt_experiments
from tests.dashboard.conftest import open_link, shown_errors

CELL = {"metric": "BLEU-4", "corruption": "passive", "refs": "5"}


def _properties(settings):
    suite = load_mutt_experiments(settings).select([CELL["corruption"]])
    table = runner.run(suite, [CELL["metric"]], [5], settings).table
    cell = cell_view.from_grid(table, "BLEU-4", "passive", 5, {t.id: t for t in suite.trials})
    return api.slice_properties(cell)


def _shown(at) -> int:
    line = next(m.value for m in at.markdown if m.value.startswith("**") and "trials shown" in m.value)
    return int(line.split("**")[1])


def test_a_slice_link_lists_the_trials_of_its_slice(app_env, app_settings):
    props = _properties(app_settings)
    # Trials of 6 to 7 words that the corruption changes by at most 6 word edits, as pandas counts them: the
    # page lists those of them that fail (show=fails is the default).
    wanted = props[props["length"].between(6, 7) & props["edit"].between(1, 6)]
    failing = int((~wanted["passed"] & ~wanted["unsupported"]).sum())
    assert failing > 0
    at = open_link("drilldown", {**CELL, "slice": "edit:1..6,length:6..7"})
    assert not shown_errors(at)
    assert _shown(at) == failing
    assert at.slider(key="dd-slice-length-default-passive-5").value == (6, 7)
    # The link is written back in the grammar's order, so the address restores the same view.
    assert at.query_params["slice"] in ("length:6..7,edit:1..6", ["length:6..7,edit:1..6"])


def test_the_slice_finder_lists_links_that_restore_each_slice(app_env, app_settings):
    at = open_link("drilldown", CELL)
    assert not at.dataframe  # the slices' box is folded: nothing of it is sent until it is opened
    at.session_state["dd-slices-default-passive-5"] = True
    at.run()
    assert not shown_errors(at)
    finder = next(d.value for d in at.dataframe if "link" in d.value.columns)
    assert len(finder) > 0 and (finder["n"] >= 20).all()
    first = finder.iloc[0]
    query = {k: v[-1] for k, v in parse_qs(urlsplit(first["link"]).query).items()}
    assert urlsplit(first["link"]).path == "drilldown" and query["metric"] == "BLEU-4"
    again = open_link("drilldown", query)
    props = _properties(app_settings)
    inside = api.parse_slice(query["slice"]).mask(props)
    failing = int((inside & ~props["passed"].to_numpy(bool) & ~props["unsupported"].to_numpy(bool)).sum())
    assert _shown(again) == failing
    # n on the finder's row is the slice's judged trials; the accuracy its passed share of them.
    assert first["n"] == int((inside & ~props["unsupported"].to_numpy(bool)).sum())


def test_a_malformed_slice_link_is_named_and_the_cell_opens(app_env):
    at = open_link("drilldown", {**CELL, "slice": "length:9..1"})
    assert not shown_errors(at)
    assert any("slice=" in w.value and "down to" in w.value for w in at.warning)
    assert _shown(at) > 0


def test_a_challenge_phenomenon_is_sliced_too(app_env, app_settings):
    """DEMETR's negation file (data/demetr, 999 applied pairs) with chrF: the slice finder lists slices of at
    least 20 judged pairs, and a slice link narrows the list to the pairs pandas counts in it."""
    from muttlab.dashboard import cell_view as cells
    from tests.dashboard.conftest import press

    negation = "demetr/dataset/critical_id8_negation.json"
    link = {"suite": f"file:{negation}", "metric": "chrF", "corruption": "critical_id8_negation",
            "show": "all", "slice": "edit:1..1"}
    at = press(open_link("drilldown", link), "dd-score")
    assert not shown_errors(at)
    suite_file = api.read_suite(app_settings.data_dir / negation)
    results = api.run_challenge(app_settings, suite_file, ["chrF"])
    cell = cells.from_challenge(results.table, suite_file, "chrF", "critical_id8_negation")
    props = api.slice_properties(cell, {t.id: t for t in suite_file.suite.trials})
    assert _shown(at) == int(props["edit"].between(1, 1).sum()) > 0
    finder = next(d.value for d in at.dataframe if "link" in d.value.columns)
    assert (finder["n"] >= 20).all() and all("suite=file%3A" in link for link in finder["link"])
