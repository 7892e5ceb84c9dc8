"""The catalogue: the study's ten types plus MUTT Lab's own, each with family, rule and a way to make pairs."""
from __future__ import annotations

from muttlab.corruptions import catalog
from muttlab.corruptions.base import Family, Rule

# MUTT (Boag et al. 2016), Table 1, plus the word-order set of its experiment files.
STUDY = {"neg_subj": Family.MEANING_ALTERING, "neg_verb": Family.MEANING_ALTERING,
         "sem_opps": Family.MEANING_ALTERING, "shuffled": Family.MEANING_ALTERING,
         "passive": Family.MEANING_PRESERVING, "near_syms": Family.MEANING_PRESERVING,
         "det_sub": Family.MEANING_PRESERVING, "double_PP": Family.FLUENCY_DISRUPTING,
         "remove_prep": Family.FLUENCY_DISRUPTING, "swap_chunks": Family.FLUENCY_DISRUPTING}


def test_study_types_keep_their_family():
    for name, family in STUDY.items():
        assert catalog.get(name).family is family
        assert catalog.get(name).study


def test_every_type_can_make_pairs():
    for ctype in catalog.all_types():
        assert ctype.generator is not None or ctype.extractor is not None, ctype.name


def test_at_least_four_new_generated_types():
    extra = [t for t in catalog.all_types() if not t.study]
    assert len(extra) >= 4
    for t in extra:
        assert t.generator is not None and t.description
        assert t.rule is (Rule.DIFFERENCE if t.family is Family.MEANING_PRESERVING else Rule.ORIG_BETTER)


def test_lists_of_generated_and_extracted_types():
    assert set(catalog.extracted_types()) == {"neg_subj", "neg_verb", "sem_opps", "shuffled", "passive",
                                              "near_syms", "det_sub"}
    assert {"double_PP", "remove_prep", "swap_chunks"} <= set(catalog.generated_types())
