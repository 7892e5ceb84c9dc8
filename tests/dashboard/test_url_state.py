"""Every view is a link: the pages write their state to the address bar and a link restores it (AppTest)."""
from __future__ import annotations


from muttlab import api
from muttlab.pairs.store import open_store
from muttlab.settings import load_settings
from tests.dashboard.conftest import grid_cells, open_link, shown_errors


def test_landing_page_shows_the_precomputed_grid(app_env):
    at = open_link("run", {})
    assert not shown_errors(at)
    assert any(s.value == "Accuracy (precomputed)" for s in at.subheader)
    cells = grid_cells(at)
    grid = api.snapshot("grid").content
    assert set(cells) == {(r.metric, r.corruption, int(r.refs)) for r in grid.cells.itertuples()}
    assert len(cells) == len(grid.cells)


def test_a_link_filters_the_precomputed_grid(app_env):
    at = open_link("run", {"metrics": "BLEU-4,TER", "corruptions": "neg_subj", "refs": "5"})
    assert sorted(grid_cells(at)) == [("BLEU-4", "neg_subj", 5), ("TER", "neg_subj", 5)]
    assert at.multiselect(key="run-metrics").value == ["BLEU-4", "TER"]


def test_run_writes_its_state_and_the_link_restores_it(app_env):
    at = open_link("run", {})
    at.multiselect(key="run-metrics").set_value(["BLEU-4", "ROUGE-L"])
    at.multiselect(key="run-corruptions").set_value(["neg_subj", "det_sub"])
    at.multiselect(key="run-refs").set_value([5])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    query = {k: at.query_params[k] for k in at.query_params}
    assert query == {"metrics": ["BLEU-4,ROUGE-L"], "corruptions": ["neg_subj,det_sub"], "refs": ["5"],
                     "run": ["1"]} or query == {"metrics": "BLEU-4,ROUGE-L", "corruptions": "neg_subj,det_sub",
                                                 "refs": "5", "run": "1"}
    # A new session (a reload, or a colleague) opening the same address gets the same live grid.
    again = open_link("run", {k: (v[0] if isinstance(v, list) else v) for k, v in query.items()})
    assert not shown_errors(again)
    assert {m.label: m.value for m in again.metric}["trials"] == "401"  # neg_subj 336 + det_sub 65
    assert again.multiselect(key="run-metrics").value == ["BLEU-4", "ROUGE-L"]


def test_drilldown_link_opens_its_cell_and_records_filters(app_env):
    at = open_link("drilldown", {"metric": "ROUGE-L", "corruption": "det_sub", "refs": "10", "show": "all"})
    assert not shown_errors(at)
    assert at.selectbox(key="dd-metric").value == "ROUGE-L"
    assert at.selectbox(key="dd-corruption").value == "det_sub"
    assert at.selectbox(key="dd-refs").value == 10
    assert any(m.value.startswith("**65** of 65 trials shown") for m in at.markdown)  # det_sub: 65 trials
    at.text_input(key="dd-query").input("dog").run()
    assert at.query_params["q"] in ("dog", ["dog"])


def test_annotate_link_opens_a_pair_that_staysopen_link(app_env, data_dir):
    from muttlab.sources import load_mutt_experiments
    settings = load_settings()
    suite = load_mutt_experiments(settings)
    with open_store(settings) as store:
        store.add([suite.of(name)[0] for name in ("neg_subj", "passive", "det_sub")], author="loader")
        target = store.get_by_key(suite.of("passive")[0].id)
    at = open_link("annotate", {"pair": str(target.id)})
    assert not shown_errors(at)
    assert any(m.value == f"#### Pair #{target.id}" for m in at.markdown)
    # Filtering the listing to another type keeps the open pair open.
    at.multiselect(key="annotate-types").set_value(["neg_subj"]).run()
    assert any(m.value == f"#### Pair #{target.id}" for m in at.markdown)
    assert at.query_params["pair"] in (str(target.id), [str(target.id)])
