"""The Severity page's first curve as it ships: a current stamp, the page's default request, the numbers of a
live curve."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.settings import Settings
from tests.snapshots.conftest import assert_current, shipped


@pytest.fixture(scope="module")
def snapshot():
    return shipped("severity")


def test_the_shipped_curve_is_current(snapshot, data_dir):
    assert_current("severity", data_dir)
    assert snapshot.stamp.rules == "tol:0.15|tie:1e-9"


def test_it_is_the_pages_first_curve_on_every_mutt_original(snapshot, data_dir):
    curve = snapshot.content
    assert curve.request == api.severity_default()
    assert list(curve.frame["metric"].unique()) == list(curve.request.metrics)
    assert sorted(curve.frame["strength"].unique()) == list(curve.request.strengths)
    from muttlab import sources
    assert curve.sentences == len(sources.mutt_originals(Settings(data_dir=data_dir)))


def test_the_shipped_curve_equals_a_live_one(snapshot, data_dir, cache_dir):
    request = snapshot.content.request
    live = api.severity(Settings(data_dir=data_dir, cache_dir=cache_dir), request.corruption, ["BLEU-4"],
                        list(request.strengths), refs=request.refs)
    shipped_rows = snapshot.content.table()
    shipped_rows = shipped_rows[shipped_rows["metric"] == "BLEU-4"].reset_index(drop=True)
    assert (live.attrs["sentences"], live.attrs["kept"]) == (snapshot.content.sentences, snapshot.content.kept)
    for column in ("n", "monotone", "signature"):
        assert live[column].tolist() == shipped_rows[column].tolist()
    for column in ("pass_rate", "pass_ci_low", "pass_ci_high", "mean_drop"):
        assert live[column].tolist() == pytest.approx(shipped_rows[column].tolist(), abs=1e-12)
