"""The Playground colours a corruption's cell by its verdict (whatever way the score moved) and says which
chosen generators did not apply to the candidate, and why."""
from __future__ import annotations

from muttlab.engine.suites import generated_trials
from tests.dashboard.conftest import figures_drawn, open_page, shown_errors

# No prepositional phrase: Duplicated PP and Removed Preposition cannot apply; a subject-verb sentence takes
# the negations. TER (an error rate) rises when BLEU falls: the sign of a change is not its verdict.
CANDIDATE = "A man is riding a bicycle."
REFERENCES = ["A man rides a bike.", "Someone is cycling.", "A person is riding a bicycle."]
TYPES = ["neg_subj", "neg_verb", "det_sub", "double_PP", "remove_prep"]
STATE = {"pg-metrics": ["BLEU-4", "TER"], "pg-types": TYPES, "pg-candidate": CANDIDATE,
         "pg-refs": "\n".join(REFERENCES)}


def test_cells_are_coloured_by_verdict_and_the_generators_that_did_not_apply_are_named(app_env, app_settings):
    at = open_page("playground", state=STATE)
    assert not shown_errors(at)
    applied = {t.corruption for t in generated_trials([("p", CANDIDATE, tuple(REFERENCES), "p")], TYPES,
                                                       app_settings.seed)}
    assert applied == {"neg_subj", "neg_verb", "det_sub"}

    heatmap = next(t for figure in figures_drawn(at) for t in figure.data if t.type == "heatmap")
    shade = {(y, x): z for y, row in zip(heatmap.y, heatmap.z) for x, z in zip(heatmap.x, row)}
    verdicts = at.dataframe[-1].value
    assert len(verdicts) == 2 * len(applied)
    # Passes on both sides of zero change (BLEU falls, TER rises) exist, so a colour by sign would differ.
    assert len({(row.s_corr > row.s_orig) for row in verdicts[verdicts["passed"]].itertuples()}) == 2
    for row in verdicts.itertuples(index=False):
        assert (shade[(row.metric, row.corruption)] > 0) == bool(row.passed)

    listed = next(m.value for m in at.markdown if m.value.startswith("**Did not apply to this candidate**"))
    assert "Duplicated PP — no prepositional phrase found" in listed
    assert "Removed Preposition — no prepositional phrase found" in listed
    assert "Negated Subject" not in listed
