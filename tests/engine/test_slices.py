"""Slices of a cell's trials: the properties read off the texts, the slice grammar of a link, the slice finder."""
from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binomtest

from muttlab import api
from muttlab.dashboard import cell_view
from muttlab.errors import InvalidArgument
from muttlab.trials import Trial


def _cell(rows):
    return pd.DataFrame([{"trial": t, "original": o, "corrupted": c, "references": refs, "passed": p,
                          "unsupported": False, "margin": 0.1 if p else -0.1} for t, o, c, refs, p in rows])


def test_properties_are_the_words_the_shared_words_and_the_word_edits():
    # Counted by hand: "a man is riding a horse" has 6 words; "a horse is riding a man" swaps two of them
    # (2 substitutions); to "there is no man riding a horse": a->there, insert "is", insert "no", delete the
    # second "is" (4; no alignment of "a man is" with "there is no man" does it in 3); "" -> "something": 1.
    cell = _cell([
        ("t1", "A man is riding a horse.", "A horse is riding a man.", ("a man rides a horse", "a dog"), True),
        ("t2", "A man is riding a horse.", "There is no man riding a horse.", ("the sky is blue",), False),
        ("t3", "", "Something", ("a b",), False),
    ])
    props = api.slice_properties(cell)
    assert props["length"].tolist() == [6, 6, 0]
    assert props["edit"].tolist() == [2, 4, 1]
    # t1: a, man, a, horse are in the references' words, is and riding are not: 4 of 6 = 67 %.
    # t2: only "is" is in "the sky is blue": 1 of 6 = 17 %. An empty original has no overlap.
    assert props["overlap"].iloc[0] == 67 and props["overlap"].iloc[1] == 17
    assert pd.isna(props["overlap"].iloc[2])
    assert "severity" not in props and "phenomenon" not in props


def test_severity_is_a_property_where_the_trials_have_more_than_one():
    trials = {f"t{i}": Trial(f"t{i}", "x", "a b", "a c", ("a b",), severity=s)
              for i, s in enumerate(["minor", "major", "major"])}
    cell = _cell([(f"t{i}", "a b", "a c", ("a b",), i != 1) for i in range(3)])
    props = api.slice_properties(cell, trials)
    assert props["severity"].tolist() == ["minor", "major", "major"]
    assert api.parse_slice("severity=major").mask(props).tolist() == [False, True, True]


@pytest.mark.parametrize("text, key", [
    ("", ""), ("length:5..8", "length:5..8"), ("edit:1..1,length:3..4", "length:3..4,edit:1..1"),
    ("severity=major, overlap:0..50", "overlap:0..50,severity=major"),
])
def test_a_slice_link_reads_back_as_itself(text, key):
    assert api.parse_slice(text).key == key
    assert api.parse_slice(key).key == key


@pytest.mark.parametrize("text, says", [
    ("length:8..5", "down to"), ("length:5..8,length:1..2", "once"), ("width:1..2", "PROPERTY:LOW..HIGH"),
    ("length:-1..2", "PROPERTY:LOW..HIGH"), ("severity=<b>x</b>", "PROPERTY=LABEL"),
    ("length:1..99999999", "PROPERTY:LOW..HIGH"),
])
def test_a_malformed_slice_is_refused_saying_the_form(text, says):
    with pytest.raises(InvalidArgument, match=says):
        api.parse_slice(text)


def test_the_slice_finder_on_mutt_active_to_passive(data_settings, mutt_suite):
    """BLEU-4 on MUTT's Active-to-Passive trials, 5 references: every slice listed has at least 20 judged
    trials, its count and accuracy are those of the trials a pandas filter of its ranges keeps, its interval is
    scipy's Wilson interval of those counts, and the list is ordered by accuracy."""
    results = api.run_grid(data_settings, metrics=["BLEU-4"], corruptions=["passive"], ref_counts=[5],
                           suite=mutt_suite)
    cell = cell_view.from_grid(results.table, "BLEU-4", "passive", 5, {t.id: t for t in mutt_suite.trials})
    props = api.slice_properties(cell)
    assert len(props) == 214  # MUTT's Active-to-Passive set (mutt/experiments/passive_a.json)
    worst = api.worst_slices(props)
    assert 0 < len(worst) <= 10 and (worst["n"] >= 20).all()
    assert worst["accuracy"].is_monotonic_increasing
    for row in worst.itertuples():
        keep = pd.Series(True, index=props.index)
        for part in row.slice.split(","):
            prop, _, span = part.partition(":")
            low, _, high = span.partition("..")
            keep &= props[prop].between(int(low), int(high))
        assert keep.sum() == row.n and props.loc[keep, "passed"].sum() == row.passed
        low, high = binomtest(row.passed, row.n).proportion_ci(0.95, method="wilson")
        assert row.ci_low == pytest.approx(100 * low) and row.ci_high == pytest.approx(100 * high)
        assert api.parse_slice(row.slice).mask(props).sum() == row.n
    # The cell's accuracy is 2 of 214 (the shipped grid, data/results); a slice cannot do better than 0 of n.
    assert worst["accuracy"].iloc[0] <= 100 * props["passed"].sum() / len(props)


def test_the_finder_refuses_a_minimum_below_one():
    with pytest.raises(InvalidArgument, match="at least one"):
        api.worst_slices(api.slice_properties(_cell([("t", "a b", "a c", ("a",), True)])), min_n=0)
