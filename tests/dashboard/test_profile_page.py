"""The Metric profile page: a shipped profile's MUTT grid, DEMETR severities, MSLC24-B edge cases and MQM
statistics side by side with their intervals, two metrics in one view, a link that restores it and never starts a
computation. The numbers drawn are the shipped profiles' (``api.snapshot("profiles")``, what ``api.profile``
returns while they are current) and, for MQM, the shipped meta-evaluation's own."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab import api
from muttlab.dashboard.number_format import correlation_text, interval_text, percent
from muttlab.dashboard.services import meta
from tests.dashboard.conftest import figures_drawn, open_link, shown_errors

TITLES = {name: meta.SECTION_TITLES[name] for name in ("mutt", "demetr_severity", "mslc", "mqm")}


def _shipped(metric: str):
    return api.snapshot("profiles").content.profiles[metric]


def test_a_link_opens_two_shipped_profiles_side_by_side(app_env):
    at = open_link("profile", {"metric": "chrF", "vs": "TER"})
    assert not shown_errors(at)
    first, second = _shipped("chrF"), _shipped("TER")
    figures = figures_drawn(at)
    assert len(figures) == 4
    for figure, name in zip(figures, TITLES):
        value = "value" if name == "mqm" else "accuracy"
        assert [t.name for t in figure.data] == ["chrF", "TER"]
        for trace, profile in zip(figure.data, (first, second)):
            table = profile.tables()[name]
            assert np.asarray(trace.y, dtype=float) == pytest.approx(table[value].to_numpy(float), nan_ok=True)
            assert list(trace.x) == meta.section_label(name, table).tolist()
            finite = np.isfinite(table["ci_high"].to_numpy(float))
            high = np.asarray(trace.error_y.array, dtype=float)
            assert high[finite] == pytest.approx((table["ci_high"] - table[value]).to_numpy(float)[finite])
    # MQM: each of chrF's statistics is the shipped meta-evaluation's, as its own page writes it.
    mqm = next(d.value for d in at.dataframe if "constant baseline" in d.value.columns)
    for pair in ("en-de", "zh-en"):
        result = api.shipped_meta_evaluation(pair)
        rows = mqm[(mqm["metric"] == "chrF") & mqm["row"].str.startswith(pair + " ")]
        for row in rows.itertuples(index=False):
            statistic = row.row.split(" ", 1)[1]
            assert row.value == correlation_text(result.value("chrF", statistic))
    assert dict(at.query_params) == {"metric": "chrF", "vs": "TER"}
    assert [b.key for b in at.button] == ["pf-compare"]  # the comparison waits for its click


def test_the_mutt_table_writes_the_profiles_numbers(app_env):
    at = open_link("profile", {"metric": "BLEU-4"})
    at.session_state["pf-table-mutt-open"] = True
    at.run()
    assert not shown_errors(at)
    table = next(d.value for d in at.dataframe if "ties" in d.value.columns)
    expected = _shipped("BLEU-4").tables()["mutt"]
    assert table["accuracy"].tolist() == [percent(v) for v in expected["accuracy"]]
    assert table["95% interval"].tolist() == [interval_text(a, b) for a, b in zip(expected["ci_low"],
                                                                                  expected["ci_high"])]
    assert table["row"].tolist() == [f"{g} ×{r}" for g, r in zip(expected["group"], expected["refs"])]


def test_a_profile_that_does_not_ship_waits_for_a_click(app_env, monkeypatch):
    built = []
    monkeypatch.setattr(api, "profile", lambda *a, **k: built.append(a))
    assert "BLEU-1" not in api.snapshot("profiles").content.profiles
    at = open_link("profile", {"metric": "BLEU-1"})
    assert not shown_errors(at) and built == []
    assert [b.key for b in at.button] == ["pf-build"]
    assert not figures_drawn(at)


def test_a_comparison_the_server_has_is_shown_with_the_engines_numbers(app_env, app_settings):
    """The comparison of two shipped profiles (no scoring: they hold every trial's outcome), as the server keeps it
    once computed: the page shows it without a click, each cell's numbers the comparison's own."""
    from muttlab.dashboard.number_format import p_value_text
    from muttlab.dashboard.shared import region
    from muttlab.profile.compare import compare_profiles

    together = {pair: api.shipped_meta_evaluation(pair) for pair in ("en-de", "zh-en")}
    compared = compare_profiles(_shipped("chrF"), _shipped("TER"), together, 0.05)
    region("results").put(meta.comparison_key(app_settings, "chrF", "TER"), compared)
    at = open_link("profile", {"metric": "chrF", "vs": "TER"})
    assert not shown_errors(at) and "pf-compare" not in [b.key for b in at.button]
    caught = next(d.value for d in at.dataframe if "only first right" in d.value.columns)
    expected = compared.caught_by_one()
    assert len(caught) == len(expected) > 0
    assert caught["first"].tolist() == [percent(v) for v in expected["first_accuracy"]]
    assert caught["p (McNemar)"].tolist() == [p_value_text(p) for p in expected["p_value"]]
    # MSLC24-B's empty source and reference: chrF scores every text 0 there, TER catches it (docs/meta_eval.md).
    row = caught[caught["row"] == "en-de/empty-source-and-reference"].iloc[0]
    assert (row["first reads"], row["second reads"], row["only second right"]) == ("missed", "caught", "40")
    mqm = next(d.value for d in at.dataframe if "test" in d.value.columns)
    assert mqm["difference"].tolist() == [f"{d:+.3f}" if d == d else "–" for d in compared.mqm["difference"]]
