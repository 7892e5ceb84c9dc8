"""BADGER-style: the compressor's pieces against textbook values, the similarity's orientation, and the
known weakness on MUTT's duplicated-PP trials (a repeated phrase compresses almost for free)."""
from __future__ import annotations

import difflib
import math

import numpy as np
import pytest

from muttlab.metrics.badger import Badger, adaptive_code_length, bwt, compressed_bits, mtf, ncd, normalise


def test_bwt_of_banana():
    # Burrows & Wheeler (1994)'s construction with an end marker that sorts first: "annb$aa".
    assert bwt(b"banana") == b"annb\0aa"


def test_mtf():
    # Move-to-front over byte values: repeats become zeros.
    assert list(mtf(b"aaab")) == [97, 0, 0, 98]


def test_code_length_equals_the_sequential_adaptive_coder():
    symbols = mtf(bwt(b"a man is riding a horse on the beach"))
    counts: dict[int, int] = {}
    bits = 0.0
    for t, s in enumerate(symbols):
        bits += -math.log2((counts.get(s, 0) + 1) / (t + 256))
        counts[s] = counts.get(s, 0) + 1
    assert adaptive_code_length(symbols) == pytest.approx(bits, rel=1e-12)


def test_normalisation():
    assert normalise("The Boys, playing!") == normalise("the boy play") == "the boy play"


def test_similarity_orientation(mutt_suite):
    metric = Badger()
    t = mutt_suite.of("neg_subj")[0]
    unrelated = mutt_suite.of("swap_chunks")[-1].original
    assert metric.similarity(t.original, t.original) > metric.similarity(t.original, unrelated)
    assert ncd(normalise(t.original), normalise(unrelated)) > ncd(normalise(t.original), normalise(t.original))
    assert Badger.higher_is_better is True


def test_combine_max_and_mean(mutt_suite):
    trials = mutt_suite.of("passive")[:20]
    cands, refs = [t.original for t in trials], [list(t.refs(10)) for t in trials]
    mean, best = Badger().score(cands, refs), Badger(combine="max").score(cands, refs)
    per_ref = np.array([[Badger().similarity(c, r) for r in rs] for c, rs in zip(cands, refs)])
    np.testing.assert_allclose(mean, per_ref.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(best, per_ref.max(axis=1), rtol=1e-12)


def _inserted(original: str, corrupted: str) -> str | None:
    """The one phrase the corruption inserted, or None when it inserted several."""
    a, b = normalise(original).split(), normalise(corrupted).split()
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "insert":
        return None
    return " ".join(b[ops[0][3]:ops[0][4]])


def test_duplicated_pp_compresses_almost_for_free(mutt_suite):
    # MUTT §5: BADGER's compressor barely notices a repeated phrase. For every double_PP trial, compare the
    # extra bits the duplicated PP costs with the extra bits of inserting, at the same place, a PP of the
    # nearest length taken from another trial (not a repeat).
    found = [(t, _inserted(t.original, t.corrupted)) for t in mutt_suite.of("double_PP")]
    trials = [t for t, pp in found if pp]
    phrases = [pp for _, pp in found if pp]
    cheaper = compared = 0
    for t, pp in zip(trials, phrases):
        other = min((p for p in phrases if p != pp), key=lambda p: abs(len(p) - len(pp)))
        corrupted = normalise(t.corrupted)
        novel = corrupted.replace(pp + " " + pp, pp + " " + other, 1)
        if novel == corrupted:
            continue  # the diff found a shifted copy; the repeated phrase is not simply "pp pp"
        compared += 1
        base = compressed_bits(normalise(t.original))
        # Extra bits per inserted character, so phrases of slightly different lengths compare fairly.
        if (compressed_bits(corrupted) - base) / len(pp) < (compressed_bits(novel) - base) / len(other):
            cheaper += 1
    assert compared > 150
    assert cheaper / compared > 0.9


def test_duplicated_pp_mostly_fails_the_unit_test(mutt_suite):
    # The consequence for the metric: the corrupted sentence is not scored below the original in most trials.
    trials = mutt_suite.of("double_PP")
    refs = [list(t.refs(5)) for t in trials]
    metric = Badger()
    orig, corr = metric.score([t.original for t in trials], refs), metric.score([t.corrupted for t in trials], refs)
    assert np.mean(orig > corr) < 0.5
