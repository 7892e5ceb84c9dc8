"""The Correlation studies page: Flickr8K Kendall τ and the ΔBLEU unit study, as the engine computes them."""
from __future__ import annotations

import pytest

from muttlab.human import dbleu
from muttlab.human.flickr import flickr_correlations
from tests.dashboard.conftest import open_page, shown_errors

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
    assert len(at.get("plotly_chart")) == 1


def test_dbleu_unit_study_matches_the_engine(app_env, app_settings):
    at = open_page("correlation", state={"dbleu-assignments": 20, "dbleu-sweeps": False})
    at = _submit(at, "Run the unit study")
    assert not shown_errors(at)
    expected = dbleu.unit_study(dbleu.flickr_expert_set(app_settings), unit_size=100, order=4, threshold=-1.0,
                                assignments=20, seed=app_settings.seed, sweeps=False).main
    main = next(d.value for d in at.dataframe if "rho" in d.value.columns)
    assert main["metric"].tolist() == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert main["rho"].tolist() == pytest.approx(expected["rho"].tolist())


def test_sample_mode_needs_the_data_dir(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("correlation")
    assert not at.exception
    assert any("MUTTLAB_DATA_DIR" in i.value for i in at.info)
