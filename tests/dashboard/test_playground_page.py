"""The Playground page: every chosen metric scores the typed sentence and its generated corruptions."""
from __future__ import annotations

import pandas as pd
import pytest

from muttlab import api
from muttlab.dashboard.score_table import score_table
from muttlab.engine.runner import registry_for
from muttlab.engine.suites import generated_trials
from muttlab.dashboard.number_format import change_text
from tests.dashboard.conftest import (builders_called, figures_drawn, html_bodies, open_page, read_as_plotly_shows,
                                     shown_errors)

# SICK.txt pair 1, sentence A, as the candidate; sentence B of pair 1 and sentences A of pairs 3 and 2 as references.
CANDIDATE = "A group of kids is playing in a yard and an old man is standing in the background"
REFERENCES = ["A group of boys in a yard is playing and a man is standing in the background",
              "The young boys are playing outdoors and the man is smiling nearby",
              "A group of children is playing in the house and there is no man standing in the background"]
STATE = {"pg-metrics": ["BLEU-4", "ROUGE-L"], "pg-types": ["neg_subj", "double_PP"],
         "pg-candidate": CANDIDATE, "pg-refs": "\n".join(REFERENCES)}


def test_scores_of_the_candidate_and_its_corruptions(app_env, app_settings):
    at = open_page("playground", state=STATE)
    assert not shown_errors(at)
    made = generated_trials([("playground", CANDIDATE, tuple(REFERENCES), "playground")], ["neg_subj", "double_PP"],
                            app_settings.seed)
    assert made  # both generators apply to this sentence
    registry = registry_for(app_settings)
    scores = at.dataframe[0].value.set_index("metric")
    for name in ("BLEU-4", "ROUGE-L"):
        expected = registry.get(name).score([CANDIDATE] + [t.corrupted for t in made], [REFERENCES] * (1 + len(made)))
        assert scores.loc[name].tolist() == pytest.approx(expected.tolist())
    bodies = "\n".join(html_bodies(at))
    for trial in made:
        assert trial.corrupted.split()[0] in bodies
    verdicts = at.dataframe[-1].value
    assert set(verdicts["metric"]) == {"BLEU-4", "ROUGE-L"}
    assert len(verdicts) == 2 * len(made)
    # The change heatmap: each cell the engine's verdict and the score's change, as number_format writes it.
    (figure,) = figures_drawn(at)
    cells = figure.data[0]
    shown = {(y, x): read_as_plotly_shows(text) for y, row in zip(cells.y, cells.text) for x, text in zip(cells.x, row)}
    for row in verdicts.itertuples(index=False):
        verdict = "pass" if row.passed else "FAIL"
        assert shown[(row.metric, row.corruption)] == f"{change_text(row.s_orig, row.s_corr)} {verdict}"


def test_typed_html_is_shown_as_text(app_env):
    state = dict(STATE, **{"pg-candidate": "<img src=x onerror=alert(1)> A man is walking in the park"})
    at = open_page("playground", state=state)
    assert not shown_errors(at)
    bodies = "\n".join(html_bodies(at))
    assert "<img" not in bodies and "&lt;img" in bodies


def test_empty_candidate_is_scored_not_refused(app_env):
    at = open_page("playground", state=dict(STATE, **{"pg-candidate": "   "}))
    assert not shown_errors(at)
    assert not any("candidate" in w.value for w in at.warning)
    assert any("No chosen generator applies" in i.value for i in at.info)
    scores = at.dataframe[0].value.set_index("metric")["candidate"]
    assert len(scores) and (scores.dropna() == 0).all()
    # Nothing to corrupt: the figure is each metric's score of the candidate, the table's numbers.
    (figure,) = figures_drawn(at)
    assert [t.name for t in figure.data] == ["candidate"]
    assert dict(zip(figure.data[0].x, figure.data[0].y)) == scores.dropna().to_dict()


def test_the_score_table_is_pandas_pivot_table_of_the_scores(app_settings):
    """The Playground's table, built from the columns at once, is what pandas' pivot_table gives, a metric that
    failed (no score) and the order the metrics were chosen in included."""
    candidates = [CANDIDATE, "A group of kids is playing in a yard", ""]
    scores = api.score(app_settings, ["ROUGE-L", "No-Such-Metric", "BLEU-4"], candidates,
                       [REFERENCES] * len(candidates))
    assert scores["score"].isna().any() and scores["score"].notna().any()
    expected = scores.pivot_table(index="metric", columns="candidate", values="score", sort=False)
    pd.testing.assert_frame_equal(score_table(scores), expected, check_names=True)
    assert list(score_table(scores).index) == ["ROUGE-L", "BLEU-4"]


def test_a_form_this_server_has_judged_is_not_judged_or_drawn_again(app_env, monkeypatch):
    """The Playground's verdicts and heatmap are kept by what was scored: the example every visitor opens on was
    judged and drawn again on each open (the heatmap alone a fifth of the page's run)."""
    drawn = builders_called(monkeypatch, "change_heatmap")
    state = dict(STATE, **{"pg-candidate": CANDIDATE + " once"})
    first, second = open_page("playground", state=state), open_page("playground", state=state)
    assert not shown_errors(first) and not shown_errors(second)
    assert len(drawn) == 1
    assert figures_drawn(first)[0] == figures_drawn(second)[0]
    pd.testing.assert_frame_equal(first.dataframe[-1].value, second.dataframe[-1].value)
    other = open_page("playground", state=dict(state, **{"pg-metrics": ["BLEU-4"]}))  # another form: judged anew
    assert not shown_errors(other) and len(drawn) == 2
