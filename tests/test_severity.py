"""Severity: corruption strength parameters on real (sample) sentences, and the curve table."""
from __future__ import annotations

import pytest

from muttlab.corruptions.generate import STRENGTHS, double_pp, drop_content, remove_prep, swap_chunks, typo
from muttlab.sources import load_sample_scenes
from muttlab.errors import MuttlabError
from muttlab.resources.spacy_nlp import parse
from muttlab.settings import Settings
from muttlab.severity import _monotone, severity_curve

SEED = 13


@pytest.fixture(scope="module")
def docs():
    return parse([s["original"] for s in load_sample_scenes()])


def _words(text: str) -> list[str]:
    return text.replace(".", " .").split()


def test_typo_strength_misspells_that_many_words(docs):
    seen = 0
    for doc in docs:
        for k in (1, 2, 3):
            out = typo(doc, SEED, strength=k)
            if out is None:
                continue
            before, after = _words(doc.text), _words(out)
            assert len(before) == len(after)
            changed = [(a, b) for a, b in zip(before, after) if a != b]
            assert len(changed) == k and all(sorted(a) == sorted(b) for a, b in changed)
            seen += 1
    assert seen > 30


def test_drop_content_strength_drops_that_many_words(docs):
    seen = 0
    for doc in docs:
        out = drop_content(doc, SEED, strength=2)
        if out is not None:
            assert len(_words(out)) == len(_words(doc.text)) - 2
            seen += 1
    assert seen >= 1


def test_swap_chunks_strength_keeps_the_words(docs):
    for doc in docs:
        out = swap_chunks(doc, SEED, strength=2)
        if out is not None:
            assert sorted(w.lower() for w in _words(out)) == sorted(w.lower() for w in _words(doc.text))
            assert out != doc.text


def test_double_pp_and_remove_prep_strength(docs):
    for doc in docs:
        out = double_pp(doc, SEED, strength=2)
        if out is not None:
            assert len(_words(out)) > len(_words(double_pp(doc, SEED)))
        two = remove_prep(doc, SEED, strength=2)
        if two is not None:
            assert len(_words(two)) == len(_words(doc.text)) - 2


def test_strength_one_is_the_default_corruption(docs):
    for doc in docs[:20]:
        assert typo(doc, SEED, strength=1) == typo(doc, SEED)
        assert drop_content(doc, SEED, strength=1) == drop_content(doc, SEED)
        assert remove_prep(doc, SEED, strength=1) == remove_prep(doc, SEED)


def test_monotone_flag_names_the_falling_step():
    assert _monotone([10.0, 20.0, 20.0], [1, 2, 3], "pass rate") == ""
    assert _monotone([10.0, 30.0, 20.0], [1, 2, 3], "pass rate") == "no: pass rate falls from strength 2 to 3"
    # Within the tie rule (1e-9 x max(1, |value|)) a step down is rounding; just beyond it, a fall.
    assert _monotone([0.4448493795, 0.4448493787], [2, 3], "mean drop") == ""
    assert _monotone([0.4448493795, 0.4448493775], [2, 3], "mean drop") == "no: mean drop falls from strength 2 to 3"


def test_curve_uses_the_same_sentences_at_every_strength(tmp_path):
    settings = Settings(cache_dir=tmp_path, use_cache=False)
    frame = severity_curve(settings, "typo", ["BLEU-4", "chrF"], [1, 2, 3])
    assert list(frame["strength"]) == [1, 2, 3, 1, 2, 3]
    assert frame["n"].nunique() == 1 and frame["n"].iloc[0] > 20
    assert frame["pass_rate"].between(0, 100).all()
    assert set(frame["monotone"]) <= {"yes"} | {m for m in frame["monotone"] if m.startswith("no: ")}
    with pytest.raises(MuttlabError, match="no strength parameter"):
        severity_curve(settings, "neg_subj", ["BLEU-4"], [1, 2])
    assert set(STRENGTHS) == {"drop_content", "typo", "swap_chunks", "double_PP", "remove_prep"}
