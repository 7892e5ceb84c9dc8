"""The word diff: changed words marked on each side, every word escaped."""
from __future__ import annotations

from muttlab.dashboard.diff import diff_block, word_diff


def test_negated_subject_pair_from_the_study(mutt_suite):
    # mutt/experiments/neg_subj: trial 0 is "A man is holding a frog" / "There is no man holding a frog".
    trial = mutt_suite.of("neg_subj")[0]
    assert (trial.original, trial.corrupted) == ("A man is holding a frog", "There is no man holding a frog")
    diff = word_diff(trial.original, trial.corrupted)
    assert diff.removed == ("A", "is")
    assert diff.added == ("There", "is", "no")
    assert diff.original_html == ('<span class="mutt-del">A</span> man <span class="mutt-del">is</span> '
                                  'holding a frog')
    assert diff.corrupted_html == '<span class="mutt-ins">There is no</span> man holding a frog'


def test_identical_sentences_have_no_marks():
    diff = word_diff("a dog runs", "a dog runs")
    assert diff.removed == diff.added == ()
    assert "mutt-" not in diff.original_html + diff.corrupted_html


def test_user_text_is_escaped():
    diff = word_diff("a <b>bold</b> & plain claim", "<script>alert(1)</script> & plain claim")
    html = diff.original_html + diff.corrupted_html
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&amp; plain claim" in html
    block = diff_block("x", "y", labels=("<i>", "ok"))
    assert "&lt;i&gt;" in block and "<i>" not in block
