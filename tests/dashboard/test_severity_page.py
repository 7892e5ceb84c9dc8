"""The Severity curves page: muttlab.api.severity's curves per metric, non-monotone ones flagged, state in the URL."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.sources import load_sample_scenes
from tests.dashboard.conftest import open_link, open_page, shown_errors

METRICS = ["BLEU-4", "ROUGE-L"]


def test_a_first_visit_scores_nothing(app_env):
    at = open_page("severity")
    assert not shown_errors(at)
    assert any("Draw the curves" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_a_link_draws_the_engines_curves_and_flags_the_falling_ones(app_env, app_settings):
    at = open_link("severity", {"metrics": ",".join(METRICS), "corruption": "drop_content", "strengths": "1,2,3", "refs": "5"})
    assert not shown_errors(at)
    expected = api.severity(app_settings, "drop_content", METRICS, [1, 2, 3], refs=5)
    shown = at.dataframe[0].value
    assert list(shown["metric"]) == list(expected["metric"]) and list(shown["strength"]) == [1, 2, 3] * 2
    assert shown["pass_rate"].tolist() == pytest.approx(expected["pass_rate"].tolist())
    assert shown["mean_drop"].tolist() == pytest.approx(expected["mean_drop"].tolist())
    assert len(at.get("plotly_chart")) == 1
    falling = set(expected.loc[expected["monotone"] != "yes", "metric"])
    flagged = {m for m in METRICS if any(w.value.startswith(f"{m} is not monotone")
                                         for w in at.warning)}
    assert flagged == falling
    assert bool(at.success) == (not falling)


def test_the_form_writes_the_view_to_the_address(app_env):
    at = open_page("severity")
    at.multiselect(key="sev-metrics").set_value(["ROUGE-L"])
    at.selectbox(key="sev-type").set_value("typo")
    at.multiselect(key="sev-strengths").set_value([1, 2])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert at.query_params["corruption"] == "typo" and at.query_params["strengths"] == "1,2"
    assert at.query_params["metrics"] == "ROUGE-L"
    assert set(at.dataframe[0].value["strength"]) == {1, 2}


def test_one_strength_is_not_a_curve(app_env):
    at = open_link("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "2"})
    assert not shown_errors(at)
    assert any("at least two strengths" in w.value for w in at.warning)


def test_a_step_within_the_tie_rule_is_not_flagged(app_env):
    # The bundled sample's one sentence that takes three dropped content words: BLEU-4's mean drop goes from
    # 0.4448493794895626 at strength 2 to 0.4448493787264544 at 3, a difference of rounding (tie rule, 1e-9).
    at = open_link("severity", {"metrics": "BLEU-4", "corruption": "drop_content", "strengths": "2,3", "refs": "5"})
    assert not shown_errors(at)
    drops = at.dataframe[0].value["mean_drop"].tolist()
    assert drops[1] < drops[0] and drops[0] - drops[1] < 1e-9
    assert not any("not monotone" in w.value for w in at.warning)
    assert at.success


def test_the_first_curves_are_drawn_over_many_sentences(app_env):
    at = open_page("severity")
    at.multiselect(key="sev-metrics").set_value(["BLEU-4"])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    # Every sample scene takes the default corruption at the default strengths 1, 2, 3.
    assert set(at.dataframe[0].value["n"]) == {len(load_sample_scenes())} and len(load_sample_scenes()) > 1
