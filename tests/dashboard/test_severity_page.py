"""The Severity curves page: muttlab.api.severity's curves per metric on every MUTT original the corruption takes
(the bundled sample without a data dir), n shown, falling curves flagged beyond the tie rule and sampling noise,
state in the URL."""
from __future__ import annotations

import json
import re

import pytest

from muttlab import api
from muttlab.corruptions.generate import GENERATORS, STRENGTHS as GENERATOR_UNITS
from muttlab.resources.spacy_nlp import parse
from muttlab.severity import pass_rate_fall
from muttlab.sources import MUTT_SETS
from tests.dashboard.conftest import html_bodies, open_link, open_page, shown_errors

METRICS = ["BLEU-4", "ROUGE-L"]
STRENGTHS = [1, 2, 3]


def _caption(at) -> str:
    found = [b for b in html_bodies(at) if "mutt-caption" in b and " take " in b]
    assert len(found) == 1, found
    return found[0]


def _mutt_originals_taking(data_dir, corruption: str, strengths: list[int], seed: int) -> tuple[int, int]:
    """Counted from the trial files themselves: (distinct MUTT originals, those the corruption changes at every
    strength)."""
    originals = []
    for name in MUTT_SETS:
        records = json.loads((data_dir / "mutt" / "experiments" / f"{name}_a.json").read_text(encoding="utf-8"))
        originals += [r["caption"].strip() for r in records]
    distinct = list(dict.fromkeys(originals))
    generator = GENERATORS[corruption]
    taking = 0
    for sentence, doc in zip(distinct, parse(distinct)):
        made = [generator(doc, seed, strength=k) for k in strengths]
        taking += all(m and m != sentence for m in made)
    return len(distinct), taking


def curve_table(at):
    """The curves' numbers, once their expander is opened."""
    at.session_state["sev-table-open"] = True
    at.run()
    assert not shown_errors(at)
    return at.dataframe[0].value


def test_a_first_visit_scores_nothing(app_env):
    at = open_page("severity")
    assert not shown_errors(at)
    assert any("Draw the curves" in i.value for i in at.info)
    assert not any("Sample data" in i.value for i in at.info)  # a data dir: the MUTT originals
    assert not at.get("vega_lite_chart")


def test_a_link_draws_the_curves_on_every_mutt_original_the_type_takes(app_env, app_settings, data_dir):
    at = open_link("severity", {"metrics": ",".join(METRICS), "corruption": "typo", "strengths": "1,2,3", "refs": "5"})
    assert not shown_errors(at)
    assert not at.dataframe  # the numbers are sent once their expander is opened
    shown = curve_table(at)
    distinct, taking = _mutt_originals_taking(data_dir, "typo", STRENGTHS, app_settings.seed)
    assert taking > 300 and set(shown["n"]) == {taking}
    assert f"n = {taking} of {distinct} MUTT original sentences take" in _caption(at)
    expected = api.severity(app_settings, "typo", METRICS, STRENGTHS, refs=5)
    assert list(shown["metric"]) == list(expected["metric"]) and list(shown["strength"]) == STRENGTHS * 2
    for column in ("pass_rate", "pass_ci_low", "pass_ci_high", "mean_drop"):
        assert shown[column].tolist() == pytest.approx(expected[column].tolist()), column
    assert (shown["pass_ci_low"] <= shown["pass_rate"]).all() and (shown["pass_rate"] <= shown["pass_ci_high"]).all()
    assert len(at.get("vega_lite_chart")) == 2  # pass rates above mean drops
    falling = set(expected.loc[expected["monotone"] != "yes", "metric"])
    flagged = {m for m in METRICS if any(w.value.startswith(f"{m} is not monotone") for w in at.warning)}
    assert flagged == falling
    assert bool(at.success) == (not falling)


def test_a_real_fall_is_flagged(app_env):
    at = open_link("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "1,2,3", "refs": "5"})
    assert not shown_errors(at)
    curve = curve_table(at)
    n = curve["n"].tolist()
    passed = [round(rate * k / 100) for rate, k in zip(curve["pass_rate"], n)]
    # More misspelt words are noticed more often on the MUTT originals: the real curve rises.
    assert passed[2] - passed[0] > 0.15 * n[0]
    assert pass_rate_fall(passed, n, STRENGTHS) == ""
    # The same counts read from the strongest corruption to the weakest: a fall far beyond the noise, already
    # from the first step to the second.
    assert pass_rate_fall(passed[::-1], n, STRENGTHS).startswith("no: pass rate falls from strength 1 to 2")


def test_the_form_writes_the_view_to_the_address(app_env):
    at = open_page("severity")
    at.multiselect(key="sev-metrics").set_value(["ROUGE-L"])
    at.selectbox(key="sev-type").set_value("typo")
    at.multiselect(key="sev-strengths").set_value([1, 2])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    assert at.query_params["corruption"] == "typo" and at.query_params["strengths"] == "1,2"
    assert at.query_params["metrics"] == "ROUGE-L"
    assert set(curve_table(at)["strength"]) == {1, 2}


def test_one_strength_is_not_a_curve(app_env):
    at = open_link("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "2"})
    assert not shown_errors(at)
    assert any("at least two strengths" in w.value for w in at.warning)


def test_without_a_data_dir_the_sample_is_used_and_a_rounding_step_is_not_flagged(app_env, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    # The bundled sample's one sentence that takes three dropped content words: BLEU-4's mean drop goes from
    # 0.4448493794895626 at strength 2 to 0.4448493787264544 at 3, a difference of rounding (tie rule, 1e-9).
    at = open_link("severity", {"metrics": "BLEU-4", "corruption": "drop_content", "strengths": "2,3", "refs": "5"})
    assert not shown_errors(at)
    assert any(i.value.startswith("**Sample data.**") for i in at.info)
    assert re.search(r"n = 1 of \d+ sample sentences take", _caption(at))
    drops = curve_table(at)["mean_drop"].tolist()
    assert drops[1] < drops[0] and drops[0] - drops[1] < 1e-9
    assert not any("not monotone" in w.value for w in at.warning)
    assert at.success


def test_a_chart_built_once_for_the_server_is_the_chart_of_each_views_own_curves(app_env, app_settings):
    """The curves' chart specification is kept for the server by the curves' content (ui.memoised_chart): a second
    session gets the same chart, and another view (other strengths, another metric set) its own, each equal to
    the chart built directly from its curves."""
    from muttlab.dashboard import charts, services
    from tests.dashboard.conftest import charts_drawn

    label, unit = services.corruption_labels(["typo"])["typo"], GENERATOR_UNITS["typo"]

    def drawn(metrics: list[str], strengths: list[int]) -> list[dict]:
        at = open_link("severity", {"metrics": ",".join(metrics), "corruption": "typo",
                                    "strengths": ",".join(map(str, strengths)), "refs": "5"})
        assert not shown_errors(at)
        return [spec for spec, _ in charts_drawn(at)]

    def built(metrics: list[str], strengths: list[int]) -> list[dict]:
        curve = api.severity(app_settings, "typo", metrics, strengths, refs=5)
        return [json.loads(json.dumps(p)) for p in charts.panels(charts.severity_curves(curve, label, unit))]

    first = drawn(METRICS, [1, 2, 3])
    assert drawn(METRICS, [1, 2, 3]) == first
    other = drawn(["BLEU-4"], [1, 2])
    assert other != first
    for specs, (metrics, strengths) in ((first, (METRICS, [1, 2, 3])), (other, (["BLEU-4"], [1, 2]))):
        expected = built(metrics, strengths)
        assert [_without_data(s) for s in specs] == [_without_data(s) for s in expected]


def _without_data(spec: dict) -> dict:
    """A panel's specification but its inline data, which Streamlit sends apart from the spec (as Arrow; the spec
    names it by a digest of its rows), and the sizing Streamlit adds."""
    return {k: v for k, v in spec.items() if k not in ("datasets", "autosize")}
