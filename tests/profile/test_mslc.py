"""MSLC24-B's edge cases as trials: one per edge-case line (and per second human translation where there is one),
as many as the data's types.tsv lists, judged as sacreBLEU's own chrF and TER judge them."""
from __future__ import annotations

from collections import Counter

import pytest

from muttlab.profile import outcomes
from muttlab.profile.mslc import EDGE_CASES, read_mslc
from tests.profile.conftest import sacre_chrf, sacre_ter, strictly_better

FOLDER = "mslc/2024/data/MSLC-B"


def _types(data_dir, pair):
    text = (data_dir / FOLDER / pair / "types.tsv").read_text(encoding="utf-8")
    return [line.split("\t")[1] for line in text[:-1].split("\n")]


def test_every_edge_case_line_is_a_trial_and_refb_adds_a_second(data_dir, profile_settings):
    read = read_mslc(profile_settings)
    counts = Counter(t.corruption for t in read.suite.trials)
    for pair in ("en-de", "en-es", "ja-zh"):
        listed = Counter(_types(data_dir, pair))
        for case in EDGE_CASES:
            assert counts[f"{pair}/{case}"] == listed[case], (pair, case)
        # The data README: correct-language (refB) lines exist for en-de only, ten sources, each of which also
        # has an empty, an untranslated, a wrong-language and a mixed-language line.
        refb = {case: counts[f"{pair}/{case} vs refB"] for case in EDGE_CASES}
        assert refb == ({c: (0 if c == "empty-source-and-reference" else 10) for c in EDGE_CASES}
                        if pair == "en-de" else dict.fromkeys(EDGE_CASES, 0))
    assert len(read.suite.trials) == 190 + 150 + 55
    assert {read.language(t.id) for t in read.suite.trials} == {"de", "es", "zh"}
    # An empty source and reference: the correct output is the empty one.
    empty = next(t for t in read.suite.trials if t.corruption == "en-de/empty-source-and-reference")
    assert (empty.original, empty.references) == ("", ("",)) and empty.corrupted


@pytest.mark.parametrize("metric, score, higher", [("chrF", sacre_chrf, True), ("TER", sacre_ter, False)])
def test_the_verdicts_are_sacrebleus(metric, score, higher, profile_settings, registry):
    read = read_mslc(profile_settings)
    judged = outcomes.judge(profile_settings, "mslc", [metric], registry)[metric]
    cells = judged.cells().set_index("group")
    expected = Counter()
    for trial in read.suite.trials:
        refs = list(trial.references)
        if strictly_better(score(trial.original, refs), score(trial.corrupted, refs), higher):
            expected[trial.corruption] += 1
    for group, row in cells.iterrows():
        assert (row["passed"], row["unsupported"]) == (expected[group], 0), group
    # chrF gives every text 0 against an empty reference: the empty output and the overgenerated one tie.
    if metric == "chrF":
        assert cells.loc["en-de/empty-source-and-reference", "passed"] == 0
        assert cells.loc["en-de/empty-source-and-reference", "tie_rate"] == 100.0
