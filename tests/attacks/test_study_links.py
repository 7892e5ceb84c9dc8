"""Links to the Human judgments and Correlation studies pages, written by anyone: unknown names, values the
page does not offer, huge lists, control characters and Markdown get the page's message and the defaults,
never a traceback, a rendered link or slow work a visitor did not ask for (AppTest on the real data)."""
from __future__ import annotations

import pytest

from muttlab.dashboard import view
from muttlab.human import dbleu, flickr, sick
from tests.attacks.test_links import markdown_values, page_text
from tests.dashboard.conftest import app_env, open_link  # noqa: F401 (fixture)

PAYLOAD = "x` ![pixel](https://attacker.example/p.png) [click](https://attacker.example) `"


def _left_out(at) -> str:
    return " ".join(w.value.replace("\\", "") for w in at.warning)


def _no_scoring(monkeypatch) -> list:
    calls = []
    monkeypatch.setattr(sick, "sick_study", lambda *a, **k: calls.append(a) or pytest.fail("a link scored SICK"))
    monkeypatch.setattr(flickr, "flickr_correlations",
                        lambda *a, **k: calls.append(a) or pytest.fail("a link scored Flickr8K"))
    return calls


def test_the_links_names_are_the_engines():
    assert view.READINGS == sick.READINGS and view.REFERENCES == sick.REFERENCE_SOURCES
    assert view.RATINGS == flickr.DATASETS
    assert max(dbleu.UNIT_SIZES) <= 10_000 and max(dbleu.ORDERS) == 4


def test_unknown_names_in_a_human_link_get_a_message_and_the_defaults(app_env, monkeypatch):
    calls = _no_scoring(monkeypatch)
    at = open_link("human", {"corruption": "no_such_type", "metric": "NoSuchMetric", "method": "evil",
                             "reading": "everything", "reference": "/etc/passwd", "metrics": "BLEU-4,NoSuch",
                             "evil": "1"})
    assert not at.exception and calls == []  # the defaults are the shipped study
    left_out = _left_out(at)
    for part in ("corruption=: no corruption type is called 'no_such_type'", "metric=: no metric is called",
                 "method=: 'evil' is not one of pearson, spearman, kendall_b, kendall_c",
                 "reading=: 'everything' is not one of trials, paper", "reference=: '/etc/passwd' is not one of",
                 "metrics=: no metric is called 'NoSuch'", "evil= is not a parameter"):
        assert part in left_out, part
    assert at.selectbox(key="human-corruption").value == "neg_subj"
    assert at.selectbox(key="human-metric").value == "METEOR-1.5"
    assert at.selectbox(key="human-method").value == "pearson"
    assert at.selectbox(key="human-reading").value == "trials"
    assert at.multiselect(key="human-matrix").value == list(sick.STUDY_METRICS)


def test_a_type_the_page_does_not_offer_is_named_and_replaced(app_env, monkeypatch):
    calls = _no_scoring(monkeypatch)
    at = open_link("human", {"corruption": "double_PP"})  # a corruption type, but generated: no SICK gold
    assert not at.exception and calls == []
    assert "This page does not offer the corruption type double_PP; showing neg_subj." in _left_out(at)
    assert at.selectbox(key="human-corruption").value == "neg_subj"


@pytest.mark.parametrize("metrics", [",".join(f"BLEU-{i % 4 + 1}" for i in range(65)), "BLEU-4," * 5000,
                                     "M" * 20_000])
def test_a_huge_list_is_left_out(app_env, monkeypatch, metrics):
    calls = _no_scoring(monkeypatch)
    at = open_link("human", {"metrics": metrics})
    assert not at.exception and calls == []
    assert "metrics=: " in _left_out(at)
    assert at.multiselect(key="human-matrix").value == list(sick.STUDY_METRICS)
    assert "M" * 300 not in page_text(at)


@pytest.mark.parametrize("page", ["human", "correlation"])
def test_control_characters_and_markdown_are_left_out_and_never_rendered(app_env, monkeypatch, page):
    _no_scoring(monkeypatch)
    at = open_link(page, {"corruption": "neg_subj\x00", "metric": "BLEU-4\n# heading", "metrics": PAYLOAD,
                          "ratings": "expert\x1b[2J", "method": PAYLOAD})
    assert not at.exception
    left_out = _left_out(at)
    assert "corruption=: the value holds a control character" in left_out
    assert "ratings=: the value holds a control character" in left_out
    for value in markdown_values(at):
        assert "](https://attacker" not in value and "![" not in value, value


def test_bad_numbers_in_a_correlation_link_get_a_message_and_the_defaults(app_env, monkeypatch):
    calls = _no_scoring(monkeypatch)
    monkeypatch.setattr(dbleu, "unit_study", lambda *a, **k: calls.append(a) or pytest.fail("the defaults ship"))
    at = open_link("correlation", {"boot": "99999999", "order": "0", "threshold": "2", "sweeps": "yes",
                                   "unit": "7", "assignments": "5", "ratings": "expert,evil"})
    assert not at.exception and calls == []
    left_out = _left_out(at)
    for part in ("boot=: bootstrap resamples '99999999' is not a whole number from 0 to 2000",
                 "order=: n-gram order '0' is not a whole number from 1 to 4",
                 "threshold=: reference weight threshold '2' is not a number from -1 to 1",
                 "sweeps=: 'yes' is not one of 0, 1", "ratings=: 'evil' is not one of expert, crowdflower",
                 "This page does not offer the unit size 7; showing 100.",
                 "This page does not offer 5 random assignments (at least 10); showing 200."):
        assert part in left_out, part
    assert at.selectbox(key="dbleu-unit").value == 100 and at.selectbox(key="dbleu-order").value == 4
    assert at.number_input(key="flickr-boot").value == 200


def test_slow_metrics_in_a_link_wait_for_a_click(app_env, monkeypatch):
    calls = _no_scoring(monkeypatch)
    # Not what ships (other resamples; sentence A as the reference): these would be scored here.
    at = open_link("correlation", {"metrics": "TERp,BADGER-like", "ratings": "crowdflower", "boot": "100"})
    assert not at.exception and calls == []
    assert at.button(key="flickr-link").label == "Correlate the metrics of this link"
    at = open_link("human", {"metric": "TERp", "metrics": "TERp,BADGER-like", "corruption": "det_sub",
                             "reference": "sentence"})
    assert not at.exception and calls == []
    assert at.button(key="human-link").label == "Score the pairs of this view"
