"""No link starts work: a link to any page, opened by an anonymous visitor of the read-only demo, fills the page's
form and computes nothing that takes more than a second; the page's button does (AppTest on the real data).

Each case is a link that, on 6c8e244, started its page's computation on open: the ΔBLEU unit study (11-14 s of
CPU for each distinct ``assignments=``), the Flickr8K correlations, the SICK study and the severity curves of a
quick metric, the scores of a challenge set named by ``file=`` or by a drill-down's ``suite=file:``."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.errors import MuttlabError
from muttlab.human import dbleu, flickr, sick
from tests.dashboard.conftest import app_env, calls, open_link  # noqa: F401 (fixtures)

CHALLENGE = "demetr/dataset/critical_id8_negation.json"  # DEMETR's negation set, 1,000 pairs (data dir)

# page, link, the engine function the page would call, the button that starts it
LINKS = [
    ("correlation", {"assignments": "37"}, (dbleu, "unit_study"), "dbleu-link"),
    ("correlation", {"assignments": "1999", "unit": "10", "sweeps": "0"}, (dbleu, "unit_study"), "dbleu-link"),
    ("correlation", {"metrics": "BLEU-4", "ratings": "expert", "boot": "100"}, (flickr, "flickr_correlations"),
     "flickr-link"),
    ("human", {"corruption": "det_sub", "metric": "BLEU-4", "metrics": "BLEU-4", "reference": "sentence"},
     (sick, "sick_study"), "human-link"),
    ("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "1,2", "refs": "5"},
     (api, "severity"), "sev-link"),
    ("challenge", {"file": CHALLENGE, "metrics": "BLEU-4"}, (api, "run_challenge"), "ch-score"),
    ("drilldown", {"suite": f"file:{CHALLENGE}", "metric": "BLEU-4", "corruption": "critical_id8_negation"},
     (api, "run_challenge"), "dd-score"),
]


@pytest.fixture
def demo(app_env, monkeypatch):
    """The read-only demo: every visitor anonymous."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    return app_env


@pytest.mark.parametrize("page, query, engine, button", LINKS,
                         ids=[f"{p}-{'-'.join(q)}" for p, q, _, _ in LINKS])
def test_a_link_fills_the_form_and_only_the_button_computes(demo, monkeypatch, calls, page, query, engine, button):
    module, name = engine

    def started(*args, **kwargs):
        calls.append(name)
        raise MuttlabError("stopped here by the test: the computation started")

    monkeypatch.setattr(module, name, started)
    at = open_link(page, query)
    assert not at.exception
    assert calls == [], f"opening the link started {name}"
    assert [b for b in at.button if b.key == button], f"no {button} button"
    at.button(key=button).click().run()
    assert not at.exception
    assert calls == [name]  # the click, and only the click, starts it
    # A second visit of the same link in the same session is the visitor's own click again: nothing new starts
    # without one in a new session.
    assert open_link(page, query) and calls == [name]


def test_distinct_assignment_links_start_no_study(demo, monkeypatch, calls):
    """The attack of issue 34: thousands of distinct ``/correlation?assignments=N`` links, each a new study."""
    monkeypatch.setattr(dbleu, "unit_study", lambda *a, **k: calls.append(k["assignments"]))
    for n in (10, 11, 12, 500, 2000):
        at = open_link("correlation", {"assignments": str(n)})
        assert not at.exception
        assert at.number_input(key="dbleu-assignments").value == n  # the link filled the form
    assert calls == []
