"""The Severity curves page: muttlab.api.severity's curves per metric on every MUTT original the corruption takes
(the bundled sample without a data dir), n shown, falling curves flagged beyond the tie rule and sampling noise,
state in the URL."""
from __future__ import annotations

import json
import re

import pytest

from muttlab import api
from muttlab.corruptions.generate import GENERATORS
from muttlab.resources.spacy_nlp import parse
from muttlab.severity import pass_rate_fall
from muttlab.sources import MUTT_SETS
from muttlab.dashboard.number_format import fmt_score, percent
from tests.dashboard.conftest import (builders_called, figures_drawn, html_bodies, open_link, open_page, press,
                                     read_as_plotly_shows, shown_errors)

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


def test_a_first_visit_draws_the_shipped_first_curve_and_scores_nothing(app_env, monkeypatch):
    from muttlab.dashboard import services

    monkeypatch.setattr(services, "severity", lambda *a, **k: pytest.fail("a first visit scored"))
    shipped = api.snapshot("severity")
    at = open_page("severity")
    assert not shown_errors(at)
    assert not any("Sample data" in i.value for i in at.info)  # a data dir: the MUTT originals
    captions = " ".join(html_bodies(at))
    assert "Shipped results" in captions and shipped.stamp.digest() in captions
    assert f"n = {shipped.content.kept} of {shipped.content.sentences} MUTT original sentences take" in _caption(at)
    # This server's data, code, metrics and rules are the snapshot's: no warning that it is not current.
    assert not any("not this server's numbers" in w.value for w in at.warning)
    shown = curve_table(at)
    expected = shipped.content.frame
    assert list(shown["metric"]) == list(expected["metric"]) == [m for m in api.severity_default().metrics
                                                                 for _ in api.severity_default().strengths]
    for column in ("pass_rate", "mean_drop"):
        assert shown[column].tolist() == pytest.approx(expected[column].tolist()), column


def test_the_shipped_curves_figure_is_built_once_for_the_server(app_env, monkeypatch):
    from muttlab.dashboard import shared

    shared.region.clear()  # this process's earlier tests kept the shipped figure already
    built = builders_called(monkeypatch, "severity_curves")
    first, second = open_page("severity"), open_page("severity")
    assert not shown_errors(first) and not shown_errors(second)
    assert len(built) == 1 and figures_drawn(second) == figures_drawn(first)


def test_the_shipped_curve_under_other_rules_says_so(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_TIE_RULE", "exact")
    at = open_page("severity")
    assert not shown_errors(at)
    warning = next(w.value for w in at.warning if "not this server's numbers" in w.value)
    other = "judged under other rules: tol:0.15|tie:1e-9, this server's are tol:0.15|tie:exact"
    assert other in warning.replace("\\", "")


def test_a_link_draws_the_curves_on_every_mutt_original_the_type_takes(app_env, app_settings, data_dir):
    at = press(open_link("severity", {"metrics": ",".join(METRICS), "corruption": "typo", "strengths": "1,2,3",
                                      "refs": "5"}), "sev-link")
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
    assert len(curve_points(at)) == 2 * len(expected)  # pass rates above mean drops
    falling = set(expected.loc[expected["monotone"] != "yes", "metric"])
    flagged = {m for m in METRICS if any(w.value.startswith(f"{m} is not monotone") for w in at.warning)}
    assert flagged == falling
    assert bool(at.success) == (not falling)


def test_a_real_fall_is_flagged(app_env):
    at = press(open_link("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "1,2,3", "refs": "5"}),
               "sev-link")
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
    at = press(open_link("severity", {"metrics": "BLEU-4", "corruption": "drop_content", "strengths": "2,3",
                                      "refs": "5"}), "sev-link")
    assert not shown_errors(at)
    assert any(i.value.startswith("**Sample data.**") for i in at.info)
    assert re.search(r"n = 1 of \d+ sample sentences take", _caption(at))
    drops = curve_table(at)["mean_drop"].tolist()
    assert drops[1] < drops[0] and drops[0] - drops[1] < 1e-9
    assert not any("not monotone" in w.value for w in at.warning)
    assert at.success


def curve_points(at) -> list[dict]:
    """The points of the page's curves, read from the figure it draws and their hovers: panel ("pass" or
    "drop"), metric (its flag included), strength, value (the text) and n as the hover writes them, the point's
    y, and its error bar's ends."""
    (figure,) = figures_drawn(at)
    found = []
    for trace in figure.data:
        panel = "pass" if trace.yaxis == "y" else "drop"
        ups = trace.error_y.array if trace.error_y.array is not None else [None] * len(trace.y)
        downs = trace.error_y.arrayminus if trace.error_y.arrayminus is not None else [None] * len(trace.y)
        for x, y, hover, up, down in zip(trace.x, trace.y, trace.hovertext, ups, downs):
            metric, strength, what, value, n = re.fullmatch(
                r"(.+), strength (\d+): (pass rate|mean score drop) ([-0-9.e+]+%?)(?: \(95% CI .*\))?, n = (\d+)",
                read_as_plotly_shows(hover)).groups()
            assert float(strength) == x and read_as_plotly_shows(trace.name) == metric
            found.append({"panel": panel, "metric": metric, "strength": int(strength), "value": value,
                          "n": int(n), "y": float(y), "low": None if down is None else y - down,
                          "high": None if up is None else y + up, "dash": trace.line.dash})
    return found


def test_the_curves_drawn_are_each_metrics_numbers(app_env, app_settings):
    """The figure on the page (the same as its download): one point per metric, strength and panel, at the
    curve's numbers, its pass rate's error bar the 95% interval, the hovers written as the table's columns, a
    line per metric and panel, dashed for a flagged one."""
    at = press(open_link("severity", {"metrics": ",".join(METRICS), "corruption": "swap_chunks", "strengths": "1,2,3",
                                      "refs": "5"}), "sev-link")
    assert not shown_errors(at)
    expected = api.severity(app_settings, "swap_chunks", METRICS, STRENGTHS, refs=5)
    points = curve_points(at)
    assert len(points) == 2 * len(expected)
    named = {m: f"{m} (not monotone)" if flag != "yes" else m
             for m, flag in zip(expected["metric"], expected["monotone"])}
    for row in expected.itertuples(index=False):
        rate, drop = (next(p for p in points if p["panel"] == panel and p["metric"] == named[row.metric]
                           and p["strength"] == row.strength) for panel in ("pass", "drop"))
        assert rate["y"] == pytest.approx(row.pass_rate) and drop["y"] == pytest.approx(row.mean_drop)
        assert (rate["low"], rate["high"]) == pytest.approx((row.pass_ci_low, row.pass_ci_high))
        assert rate["value"] == percent(row.pass_rate) and drop["value"] == fmt_score(row.mean_drop)
        assert rate["n"] == drop["n"] == row.n
        dash = "solid" if named[row.metric] == row.metric else "dash"
        assert rate["dash"] == drop["dash"] == dash
