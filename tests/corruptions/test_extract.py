"""SICK extraction against the study's own extracted lists (mutt/corruptions/*.txt, Boag et al. 2016)."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from muttlab.corruptions.extract import (EXTRACTORS, TEMPLATES, edit_distance, normalise, one_word_difference,
                                         without_articles)
from muttlab.engine.pools import read_study_list
from muttlab.settings import Settings
from muttlab.sources import load_sick

# "num:" in the header of each study list, mutt/corruptions/<type>.txt.
STUDY_LIST_COUNTS = {"neg_subj": 543, "neg_verb": 339, "sem_opps": 619, "shuffled": 19, "passive": 304,
                     "near_syms": 515, "det_sub": 150}


@pytest.fixture(scope="module")
def sick(data_dir):
    return load_sick(Settings(data_dir=data_dir))


@pytest.fixture(scope="module")
def extracted(sick):
    # Every type's extractor over SICK, as the suite builder (muttlab.engine.suites) runs them.
    return {name: [e for e in map(EXTRACTORS[name], sick) if e is not None] for name in TEMPLATES}


@pytest.fixture(scope="module")
def by_id(sick):
    return {p.pair_id: p for p in sick}


def test_study_list_headers_are_what_we_compare_with(data_dir):
    for name, count in STUDY_LIST_COUNTS.items():
        header = (data_dir / "mutt" / "corruptions" / f"{name}.txt").read_text().splitlines()[:5]
        assert any(re.match(rf"num:\s+{count}$", line) for line in header), name


@pytest.mark.parametrize("name", sorted(STUDY_LIST_COUNTS))
def test_counts_match_the_study(extracted, name):
    assert len(extracted[name]) == STUDY_LIST_COUNTS[name]


@pytest.mark.parametrize("name", sorted(STUDY_LIST_COUNTS))
def test_same_pairs_as_the_study_lists(extracted, data_dir, name):
    theirs = Counter((e.sentence.strip(), e.corrupted.strip())
                     for e in read_study_list(data_dir / "mutt" / "corruptions" / f"{name}.txt"))
    ours = Counter((e.original, e.corrupted) for e in extracted[name])
    assert ours == theirs


def test_det_sub_pairs_differ_only_in_articles(extracted):
    for e in extracted["det_sub"]:
        assert e.original != e.corrupted
        assert without_articles(e.original) == without_articles(e.corrupted)


@pytest.mark.parametrize("name,pattern", [("neg_subj", r"There (is|are) no"),
                                          ("neg_verb", r" (is|are) not "),
                                          ("passive", r"\b(is|are) being\b")])
def test_marker_is_on_the_corrupted_side_only(extracted, by_id, name, pattern):
    for e in extracted[name]:
        assert re.search(pattern, e.corrupted) and not re.search(pattern, e.original)
        label = by_id[e.pair_id].entailment
        assert label == ("ENTAILMENT" if name == "passive" else "CONTRADICTION")


@pytest.mark.parametrize("name,entailment", [("near_syms", True), ("sem_opps", False)])
def test_one_word_substitutions(extracted, by_id, name, entailment):
    for e in extracted[name]:
        assert one_word_difference(e.original, e.corrupted)
        assert (by_id[e.pair_id].entailment == "ENTAILMENT") is entailment


def test_shuffled_pairs_have_the_same_bag_of_words(extracted):
    for e in extracted["shuffled"]:
        assert e.original != e.corrupted
        assert sorted(e.original.split()) == sorted(e.corrupted.split())


def test_unmarked_types_corrupt_the_side_farther_from_the_caption(extracted):
    for name in ("det_sub", "near_syms", "sem_opps", "shuffled"):
        for e in extracted[name]:
            caption = normalise(e.caption)
            assert edit_distance(caption, normalise(e.corrupted)) >= edit_distance(caption, normalise(e.original))


def test_human_score_is_sick_relatedness(extracted, by_id):
    for e in extracted["neg_subj"][:50]:
        assert e.human_score == by_id[e.pair_id].relatedness
        assert e.source == f"sick:{e.pair_id}"


def test_pairs_from_different_captions_are_not_extracted(sick):
    mixed = [p for p in sick if normalise(p.original_a) != normalise(p.original_b)]
    assert mixed
    assert all(EXTRACTORS[name](p) is None for p in mixed[:300] for name in EXTRACTORS)


def test_edit_distance_known_values():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance(["a", "b"], ["a", "c", "b"]) == 1


def test_edit_distance_equals_nltk_on_sick_sentences(sick):
    from nltk.metrics.distance import edit_distance as nltk_edit_distance
    texts = [p.sentence_a for p in sick[:20]] + [p.original_a for p in sick[:20]]
    for a, b in zip(texts, texts[1:] + texts[:1]):
        assert edit_distance(a, b) == nltk_edit_distance(a, b)
        assert edit_distance(a.split(), b.split()) == nltk_edit_distance(a.split(), b.split())
