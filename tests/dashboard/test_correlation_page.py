"""The Correlation studies page: Flickr8K Kendall τ and the ΔBLEU unit study, as the engine computes them."""
from __future__ import annotations

import os

import pytest

from muttlab import api
from muttlab.dashboard.services.core import APART_NICENESS
from muttlab.human import dbleu, flickr
from muttlab.human.flickr import flickr_correlations
from tests.dashboard.conftest import (builders_called, figure_title, figures_drawn, open_link, open_page,
                                     shown_errors)

STATE = {"flickr-metrics": ["BLEU-1"], "flickr-datasets": ["expert"], "flickr-boot": 0}


def _submit(at, label):
    next(b for b in at.get("form_submit_button") if b.label == label).click().run()
    return at


def test_flickr_expert_kendall_matches_the_study(app_env, app_settings):
    at = _submit(open_page("correlation", state=STATE), "Correlate")
    assert not shown_errors(at)
    expected = flickr_correlations(app_settings, ["BLEU-1"], datasets=("expert",), n_boot=0).table
    table = next(d.value for d in at.dataframe if "signature" in d.value.columns)
    assert table["metric"].tolist() == ["BLEU-1"]
    assert table["tau"].tolist() == pytest.approx(expected["tau"].tolist())
    assert table["n"].tolist() == expected["n"].tolist()
    # The unit study below shows its shipped charts; the Flickr8K section draws one, its bar the study's τ.
    drawn = [f for f in figures_drawn(at) if figure_title(f) == "Kendall τ × 100 with human ratings (95% CI)"]
    assert len(drawn) == 1
    assert [list(t.y) for t in drawn[0].data] == [pytest.approx(expected["tau"].tolist())]
    assert list(drawn[0].data[0].error_y.array) == pytest.approx((expected["ci_high"] - expected["tau"]).tolist(),
                                                                 nan_ok=True)  # no resamples: no interval


def test_dbleu_unit_study_matches_the_engine(app_env, app_settings):
    at = open_page("correlation", state={"dbleu-assignments": 20, "dbleu-sweeps": False})
    at = _submit(at, "Run the unit study")
    assert not shown_errors(at)
    expected = dbleu.unit_study(dbleu.flickr_expert_set(app_settings), unit_size=100, order=4, threshold=-1.0,
                                assignments=20, seed=app_settings.seed, sweeps=False).main
    main = next(d.value for d in at.dataframe if "rho" in d.value.columns)
    assert main["metric"].tolist() == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert main["rho"].tolist() == pytest.approx(expected["rho"].tolist())
    # Its figure: a bar per comparison at the study's ρ, whiskers to the assignments' 95% interval.
    (bars,) = [f for f in figures_drawn(at) if figure_title(f).startswith("Spearman ρ with human ratings, units of 100")]
    assert list(bars.data[0].x) == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert list(bars.data[0].y) == pytest.approx(expected["rho"].tolist())
    assert list(bars.data[0].error_y.array) == pytest.approx((expected["rho_high"] - expected["rho"]).tolist())
    assert list(bars.data[0].error_y.arrayminus) == pytest.approx((expected["rho"] - expected["rho_low"]).tolist())


def test_the_unit_study_runs_apart_from_the_server_at_a_lower_priority(app_env, monkeypatch, calls):
    """Its pure Python would otherwise share the server's interpreter with every visitor's page run."""
    study = dbleu.unit_study

    def where(*args, **kwargs):
        calls.append(f"{os.getpid()} {os.nice(0)}")
        return study(*args, **kwargs)

    monkeypatch.setattr(dbleu, "unit_study", where)
    at = _submit(open_page("correlation", state={"dbleu-assignments": 20, "dbleu-sweeps": False}),
                 "Run the unit study")
    assert not shown_errors(at) and any("rho" in d.value.columns for d in at.dataframe)
    (pid, niceness), = [line.split() for line in calls.path.read_text().splitlines()]
    assert int(pid) != os.getpid() and int(niceness) == min(19, os.nice(0) + APART_NICENESS)


def test_without_a_data_dir_the_shipped_studies_are_shown(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    shipped = api.snapshot("human")
    at = open_page("correlation")
    assert not shown_errors(at)
    assert not at.get("form_submit_button")  # nothing can be computed without the data
    table = next(d.value for d in at.dataframe if "signature" in d.value.columns)
    assert set(table["dataset"]) == {"expert", "crowdflower"}
    assert table["tau"].tolist() == pytest.approx(shipped.content.flickr.table["tau"].tolist())
    main = next(d.value for d in at.dataframe if "rho" in d.value.columns and "sweep" not in d.value.columns)
    assert main["metric"].tolist() == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert main["rho"].tolist() == pytest.approx(shipped.content.units.main["rho"].tolist())
    captions = " ".join(c.proto.body for c in at.get("html"))
    assert "Shipped results" in captions and shipped.stamp.digest() in captions and "no data dir" in captions


def test_with_a_data_dir_the_shipped_studies_come_first_and_a_covered_request_scores_nothing(app_env, monkeypatch,
                                                                                              calls):
    monkeypatch.setattr(flickr, "flickr_correlations", lambda *a, **k: calls.append("flickr_correlations"))
    monkeypatch.setattr(dbleu, "unit_study", lambda *a, **k: calls.append("unit_study"))
    shipped = api.snapshot("human")
    at = open_page("correlation", state={"flickr-metrics": ["BLEU-4", "CIDEr-D"], "flickr-datasets": ["expert"]})
    assert not shown_errors(at)
    assert len([d for d in at.dataframe if "signature" in d.value.columns]) == 1
    at = _submit(at, "Correlate")
    assert not shown_errors(at) and calls == []
    table = next(d.value for d in at.dataframe if "signature" in d.value.columns)
    by_metric = shipped.content.flickr.table.set_index(["metric", "dataset"])
    expected = by_metric.loc[[("BLEU-4", "expert"), ("CIDEr-D", "expert")]]
    assert table["tau"].tolist() == pytest.approx(expected["tau"].tolist())
    assert at.query_params["metrics"] in ("BLEU-4,CIDEr-D", ["BLEU-4,CIDEr-D"])


def test_a_link_restores_both_studies_in_a_new_session(app_env, app_settings):
    at = open_page("correlation", state=dict(STATE, **{"dbleu-assignments": 20, "dbleu-sweeps": False,
                                                      "dbleu-unit": 50, "dbleu-order": 2}))
    at = _submit(_submit(at, "Correlate"), "Run the unit study")
    assert not shown_errors(at)
    query = {k: (v[0] if isinstance(v, list) else v) for k, v in ((k, at.query_params[k]) for k in at.query_params)}
    assert query == {"metrics": "BLEU-1", "ratings": "expert", "boot": "0", "unit": "50", "order": "2",
                     "threshold": "-1.0", "assignments": "20", "sweeps": "0"}
    again = open_link("correlation", query)
    assert not shown_errors(again)
    assert again.multiselect(key="flickr-metrics").value == ["BLEU-1"]
    assert again.selectbox(key="dbleu-unit").value == 50 and again.selectbox(key="dbleu-order").value == 2
    expected = flickr_correlations(app_settings, ["BLEU-1"], datasets=("expert",), n_boot=0).table
    table = next(d.value for d in again.dataframe if "signature" in d.value.columns)
    assert table["tau"].tolist() == pytest.approx(expected["tau"].tolist())
    main = next(d.value for d in again.dataframe if "rho" in d.value.columns)
    units = dbleu.unit_study(dbleu.flickr_expert_set(app_settings), unit_size=50, order=2, threshold=-1.0,
                             assignments=20, seed=app_settings.seed, sweeps=False).main
    assert main["rho"].tolist() == pytest.approx(units["rho"].tolist())


def test_a_second_visitor_of_the_shipped_studies_gets_their_figures_unbuilt(app_env, monkeypatch):
    """The shipped studies' five figures are built once for the server (services.kept_figure): each open built
    them again, most of the page's run. The second visitor is shown the same figures; a study this server
    computes has figures of its own."""
    from muttlab.dashboard import shared

    shared.region.clear()  # this process's earlier tests kept the shipped figures already
    built = builders_called(monkeypatch, "correlation_bars", "sweep_lines")
    first = open_page("correlation")
    assert not shown_errors(first) and len(built) == 5  # τ bars, ρ bars and the three sweeps
    second = open_page("correlation")
    assert not shown_errors(second) and len(built) == 5
    assert figures_drawn(second) == figures_drawn(first)
    computed = _submit(open_page("correlation", state=STATE), "Correlate")
    assert not shown_errors(computed) and len(built) == 6
    (bars,) = [f for f in figures_drawn(computed) if figure_title(f) == "Kendall τ × 100 with human ratings (95% CI)"]
    assert [str(x) for x in bars.data[0].x] == ["BLEU-1"]
