"""The Learned metrics page's Evaluate under a progress bar that says each step of the evaluation and counts the
sentences it encodes (``muttlab.learned.reval.evaluate_model``'s reports, tests/learned/test_evaluation_progress.py),
not a bare spinner. With the shipped Tree-LSTM model on real SICK pairs."""
from __future__ import annotations

from muttlab import api
from tests.dashboard.conftest import open_page, shown_errors
from tests.learned.test_evaluation_progress import ENCODED


def test_the_learned_page_counts_the_sentences_it_encodes(app_env, monkeypatch):
    """The page's Evaluate draws each step and the sentences encoded on its bar (on the first 100 pairs of the
    split, so that the test is quick: the same code as the whole split)."""
    from streamlit.delta_generator import DeltaGenerator

    texts = []
    real_progress, real_evaluate = DeltaGenerator.progress, api.evaluate_reval
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None, **k: texts.append(text)
                        or real_progress(self, value, text=text, **k))
    monkeypatch.setattr(api, "evaluate_reval", lambda *a, **k: real_evaluate(*a, limit=100, bootstrap=50, **k))
    at = open_page("learned")
    at = at.button(key="learned-evaluate").click().run()
    assert not shown_errors(at)
    assert any(t and t.startswith("reading the pairs") and t.endswith(" · 0/4") for t in texts), texts
    assert any(t and ENCODED.fullmatch(t) and t.startswith("predicting 100 pairs:") for t in texts), texts
    assert any(t and t.startswith("bootstrapping") and t.endswith(" · 3/4") for t in texts), texts
    shown = at.dataframe[-1].value  # the evaluation's row, under the model's history
    assert shown["n"].tolist() == [100] and shown["split"].tolist() == ["test"], shown
