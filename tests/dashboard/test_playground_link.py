"""The Playground's form in its link: a link fills the form and waits for the Score button, unless this server
has scored that form already; a visitor's own form is written into the address."""
from __future__ import annotations

import json

import pytest

from muttlab.engine.runner import registry_for
from tests.dashboard.conftest import open_link, shown_errors

# SICK.txt pair 1, sentence A, as the candidate; sentence B of pair 1 and sentence A of pair 3 as references.
CANDIDATE = "A group of kids is playing in a yard and an old man is standing in the background"
REFERENCES = ["A group of boys in a yard is playing and a man is standing in the background",
              "The young boys are playing outdoors and the man is smiling nearby"]
LINK = {"candidate": CANDIDATE, "references": json.dumps(REFERENCES), "metrics": "BLEU-4,ROUGE-L",
        "types": "neg_subj"}


def _score(at):
    return next(b for b in at.get("form_submit_button") if b.label == "Score").click().run()


def _scores_table(at):
    return next((d.value for d in at.dataframe if "metric" in d.value.columns and "candidate" in d.value.columns),
                None)


def test_a_link_fills_the_form_and_scoring_starts_from_the_button(app_env, app_settings):
    at = open_link("playground", LINK)
    assert not shown_errors(at)
    assert at.text_area(key="pg-candidate").value == CANDIDATE
    assert at.text_area(key="pg-refs").value == "\n".join(REFERENCES)
    assert at.multiselect(key="pg-metrics").value == ["BLEU-4", "ROUGE-L"]
    assert at.multiselect(key="pg-types").value == ["neg_subj"]
    assert _scores_table(at) is None and any("press **Score**" in i.value for i in at.info)
    at = _score(at)
    assert not shown_errors(at)
    scores = _scores_table(at).set_index("metric")
    registry = registry_for(app_settings)
    for name in ("BLEU-4", "ROUGE-L"):  # the candidate's column: the metric's own score of it
        assert scores.loc[name, "candidate"] == pytest.approx(registry.get(name).score([CANDIDATE], [REFERENCES])[0])
    # Another visitor's session opening the same link now gets the scores this server has, without a click.
    again = open_link("playground", LINK)
    assert _scores_table(again) is not None and not any("press **Score**" in i.value for i in again.info)


def test_a_visitors_form_is_written_into_the_address(app_env):
    at = open_link("playground", {})  # the example, scored at once as before
    assert not shown_errors(at) and _scores_table(at) is not None
    at.text_area(key="pg-candidate").input(CANDIDATE)
    at = _score(at)
    assert at.query_params["candidate"] in (CANDIDATE, [CANDIDATE])
    refs = at.query_params["references"]
    assert json.loads(refs[0] if isinstance(refs, list) else refs) == at.text_area(key="pg-refs").value.split("\n")
