"""A Playground link's ``candidate=`` and ``references=``, written by anyone, opened by an anonymous visitor:
huge values, markup and encoding tricks are left out with a message naming the parameter; what is kept fills
the form as text and scores nothing until the visitor presses Score."""
from __future__ import annotations

import json

import pytest

from muttlab.dashboard.view import LINK_REFERENCES, check
from muttlab.settings import active_limits
from tests.attacks.test_links import markdown_values
from tests.dashboard.conftest import app_env, html_bodies, open_link, shown_errors  # noqa: F401 (fixtures)

MARKUP = "<img src=x onerror=alert(1)> [click](https://evil.example) **bold** $x$ %{y}"


@pytest.mark.parametrize("params, says", [
    ({"candidate": "a " * active_limits().max_chars}, "characters long"),                  # over the sentence limit
    ({"references": json.dumps(["a b"] * (active_limits().max_refs + 1))}, "references, over"),
    ({"references": json.dumps(["x" * 3_000])}, "reference 1 is 3,000 characters long"),
    ({"references": json.dumps(["a"] * 4_000)}, "characters long"),                        # over the link's length
    ({"references": "not json"}, "not a JSON list"),
    ({"references": '{"a": "b"}'}, "not a JSON list"),
    ({"references": "[]"}, "not a JSON list"),
    ({"references": "[1, 2]"}, "not a JSON list"),
    ({"references": "[" * 100_000}, "characters long"),                                   # deep nesting, huge
    ({"references": '["ok", "a\\u0000b"]'}, "control character"),                         # NUL behind an escape
    ({"references": '["\\ud800"]'}, "lone surrogate"),
    ({"references": '["a\\u001bb"]'}, "control character"),                                # ESC behind an escape
    ({"candidate": "a\x00b"}, "control character"),
])
def test_a_bad_playground_value_is_left_out_naming_why(params, says):
    view = check(params)
    (name,) = params
    assert name not in view.params
    (problem,) = view.problems
    assert problem.startswith(f"{name}=:") and says in problem and len(problem) < 300


def test_the_link_length_bound_is_the_documented_one():
    assert check({"references": json.dumps(["a" * 1_000] * 7)}).params  # 7,037 characters: within 8,000
    assert LINK_REFERENCES == 8_000


@pytest.mark.parametrize("params", [
    {"candidate": MARKUP, "references": json.dumps([MARKUP, "a man rides a bike"])},
    {"candidate": "a " * active_limits().max_chars, "references": "[" * 100_000},
    {"candidate": "ｆｕｌｌ‮ｗｉｄｔｈ", "references": json.dumps(["\u202egnirts desrever", "ok"])},
])
def test_an_anonymous_visitor_gets_the_form_as_text_and_nothing_scored(app_env, monkeypatch, params):
    import muttlab.api

    scored = []
    real = muttlab.api.score_together  # what the Playground's scoring calls (with the other visitors' waiting)
    monkeypatch.setattr(muttlab.api, "score_together", lambda *a, **k: scored.append(a) or real(*a, **k))
    at = open_link("playground", params)
    assert not shown_errors(at)
    assert scored == []  # a link alone starts no scoring
    kept = check(params).params
    if "candidate" in kept:
        assert at.text_area(key="pg-candidate").value == params["candidate"]
        assert any("press **Score**" in i.value for i in at.info)
    for shown in markdown_values(at):
        assert "](https://evil" not in shown.replace("\\]", "").replace("\\(", "") or "\\[" in shown, shown
    assert "<img" not in "".join(html_bodies(at)).replace("&lt;img", "")
