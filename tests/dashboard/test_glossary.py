"""The glossary: every term the pages use is explained once, and the pages show the explanations as tooltips."""
from __future__ import annotations

from muttlab.dashboard import glossary
from tests.dashboard.conftest import open_link, open_page, shown_errors


def test_a_margin_is_explained_for_the_rule_of_its_corruption():
    # Active-to-Passive is meaning-preserving (the difference rule), Negated Subject meaning-altering.
    assert "−0.85" in glossary.margin("passive") and "s_orig" in glossary.margin("passive")
    assert "positive passes" in glossary.margin("neg_subj") and "−0.85" not in glossary.margin("neg_subj")
    unknown = glossary.margin("a_users_type")
    assert "−0.85" in unknown and "positive passes" in unknown


def test_the_drilldown_numbers_carry_their_explanations(app_env):
    at = open_link("drilldown", {"metric": "BLEU-4", "corruption": "passive", "refs": "5"})
    assert not shown_errors(at)
    helps = {m.label: m.help for m in at.metric}
    assert "−0.85" in helps["passed"]
    assert "Wilson" in helps["accuracy"]
    assert "tie" in helps["failed"]
    assert at.selectbox(key="dd-refs").help == glossary.term("references (5/10/20)")
    assert any(c.value == glossary.term("signature") for c in at.caption)


def test_the_playground_explains_generators_that_do_not_apply(app_env):
    at = open_page("playground")
    assert at.multiselect(key="pg-types").help == glossary.term("not applied")
