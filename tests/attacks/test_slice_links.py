"""A Drill-down link's ``slice=``, written by anyone, opened by an anonymous visitor: huge, markup, encoding
tricks and repeated conditions are left out with a message naming the parameter, the cell still opens, and
nothing of the value is rendered as Markdown or HTML."""
from __future__ import annotations

import re

import pytest

from muttlab.dashboard.view import MAX_TEXT, check
from tests.attacks.test_links import markdown_values
from tests.dashboard.conftest import app_env, app_settings, html_bodies, open_link, shown_errors  # noqa: F401 (fixtures)

CELL = {"metric": "BLEU-4", "corruption": "passive", "refs": "5"}


@pytest.mark.parametrize("value, says", [
    ("length:1..2," * 2_000, "characters long"),                      # huge
    ("severity=<img src=x onerror=alert(1)>", "PROPERTY=LABEL"),     # HTML
    ("severity=[x](https://evil.example)", "PROPERTY=LABEL"),        # a Markdown link
    ("length:１..９", "PROPERTY:LOW..HIGH"),                          # full-width digits read as numbers
    ("length:1..2\x00", "control character"),                         # NUL
    ("length:1..2%2Cedit:1..1", "PROPERTY:LOW..HIGH"),               # an encoded comma, decoded once only
    ("length:1..5,length:6..9", "twice"),                             # one property twice
    ("length:" + "9" * 7 + "..1", "PROPERTY:LOW..HIGH"),             # a number past the grammar's six digits
])
def test_a_bad_slice_is_left_out_naming_why(value, says):
    view = check({**CELL, "slice": value}, metric_names=["BLEU-4"])
    assert "slice" not in view.params
    (problem,) = view.problems
    assert problem.startswith("slice=:") and says in problem
    assert len(problem) < MAX_TEXT + 200  # the message quotes at most the start of the value


@pytest.mark.parametrize("value", ["severity=<img src=x onerror=alert(1)>", "severity=[x](https://evil.example)",
                                   "length:1..2," * 2_000])
def test_an_anonymous_visitor_sees_the_cell_and_no_markup(app_env, value):
    at = open_link("drilldown", {**CELL, "slice": value})
    assert not shown_errors(at)
    assert any("Left out of this link" in w.value and "slice=" in w.value for w in at.warning)
    assert at.metric and at.metric[0].label == "trials"  # the cell opened without the slice
    for shown in markdown_values(at):  # escaped: a backslash before each character Markdown or HTML reads
        assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(https://evil", shown), shown
    assert "<img" not in "".join(h for h in html_bodies(at))
    assert "slice" not in at.query_params  # the address bar keeps only what was checked


def test_a_slice_wider_than_the_cell_is_clamped_not_an_error(app_env):
    at = open_link("drilldown", {**CELL, "slice": "length:0..999999"})
    assert not shown_errors(at)
    length = next(s for s in at.slider if s.key.startswith("dd-slice-length"))
    assert length.value == (length.min, length.max)  # clamped to the cell's sentences: every trial
