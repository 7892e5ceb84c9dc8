"""BADGER-like: SimMetrics' Smith-Waterman-Gotoh windowed affine on hand-derived values and against a literal
transcription of its recurrence, the Burrows-Wheeler transform on known examples, the normalisation, the metric's
name and signature, and a few cells of the MUTT grid against the original tool's (``mutt/badger/accuracy.tsv``)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from muttlab.engine.runner import run
from muttlab.sources import load_mutt_experiments
from muttlab.metrics.badger import Badger, bwt, normalise
from muttlab.metrics.registry import Registry
from muttlab.metrics.simmetrics import swg_windowed_affine, swg_windowed_affine_unnormalised

# --------------------------------------------------------------------------- the alignment measure


def test_swg_identical_prefix_is_simmetrics_own_example():
    # 11 identical characters in a row (+5 each = 55); "1" vs "2" would add -3, so the local alignment stops
    # before it. Normalised by 5 x the shorter length (12) = 60: 55/60, SimMetrics' own unit-test value.
    assert swg_windowed_affine("Test String1", "Test String2") == pytest.approx(55 / 60)


def test_swg_approximate_matches():
    # d and t are in one approximate group: +3 of a possible +5.
    assert swg_windowed_affine("d", "t") == pytest.approx(3 / 5)
    # The exact test is case-sensitive, the approximate one lower-cases: D vs d is an approximate match.
    assert swg_windowed_affine("D", "d") == pytest.approx(3 / 5)
    # No group holds both: the best cell stays 0.
    assert swg_windowed_affine("ab", "xy") == 0.0


def test_swg_affine_gap_costs():
    # "ab" (+10), one character of the second string skipped (gap of 1: -5), "cd" (+10) = 15 of 5 x 4.
    assert swg_windowed_affine("abcd", "abXcd") == pytest.approx(15 / 20)
    # Two skipped characters cost 5 + 1 = 6: 10 - 6 + 10 = 14, better than "ab" or "cd" alone (10).
    assert swg_windowed_affine("abcd", "abXYcd") == pytest.approx(14 / 20)
    assert swg_windowed_affine_unnormalised("abcd", "abXYcd") == 14.0


def test_swg_window_counts_from_the_start_as_in_simmetrics():
    # "xyz" (+15), skip Q (-5), "ab" (+10) = 20 of 25, which needs a gap starting at column 2 ("z").
    assert swg_windowed_affine("xyzab", "xyzQab", window=2) == pytest.approx(20 / 25)
    # SimMetrics' window admits gap starts at columns 1..window (never 0): with window 1 the gap from column
    # 2 is not allowed and the best is "xyz" alone, 15 of 25.
    assert swg_windowed_affine("xyzab", "xyzQab", window=1) == pytest.approx(15 / 25)


def test_swg_empty_string_scores_one_as_simmetrics():
    assert swg_windowed_affine("", "abc") == 1.0


def _simmetrics_literal(s: str, t: str, window: int) -> float:
    """SimMetrics' getUnNormalisedSimilarity as written: a full matrix and a loop over the gap window."""
    groups = ("dt", "gj", "lr", "mn", "bpv", "aeiou", ",.")

    def sub(a, b):
        if a == b:
            return 5
        return 3 if any(a.lower() in g and b.lower() in g for g in groups) else -3

    n, m = len(s), len(t)
    d = [[0.0] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            gap_down = max([0.0] + [d[i - k][j] - (5 + (k - 1)) for k in range(max(1, i - window), i)])
            gap_right = max([0.0] + [d[i][j - k] - (5 + (k - 1)) for k in range(max(1, j - window), j)])
            diagonal = (d[i - 1][j - 1] if i and j else 0.0) + sub(s[i], t[j])
            d[i][j] = max(0.0, gap_down, gap_right, diagonal)
    return max(max(row) for row in d)


def test_swg_kernel_equals_the_literal_recurrence():
    rng = random.Random(13)
    alphabet = "abdtelr ,.xyzAE"
    for _ in range(300):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.4:  # long shared stretches with insertions exercise the gaps
            cut = rng.randint(0, len(s))
            t = s[:cut] + t[:rng.randint(1, 6)] + s[cut:]
        window = rng.choice([1, 2, 3, 5, 100])
        assert swg_windowed_affine_unnormalised(s, t, window) == _simmetrics_literal(s, t, window), (s, t, window)


# --------------------------------------------------------------------------- BWT and normalisation


def test_bwt_known_examples():
    # Sorted rotations of "banana": abanan anaban ananab banana nabana nanaba -> last column "nnbaaa".
    assert bwt("banana") == "nnbaaa"
    # "abc": abc bca cab -> "cab". "a b": rotations "a b" " ba" "ba ", sorted " ba" "a b" "ba " (space sorts
    # first) -> "ab ".
    assert bwt("abc") == "cab"
    assert bwt("a b") == "ab "
    # Without an end marker, every rotation of a string has the same transform.
    assert bwt("nabana") == bwt("banana")


def test_normalisation_is_double_metaphone_primary_cut_to_four():
    # a -> A, man -> MN, riding -> RTNK (Philips 2000); punctuation and case gone.
    assert normalise("A man, riding!") == "A MN RTNK"
    # Thompson -> TMPSN, cut to 4 characters as in Philips' code and Commons Codec.
    assert normalise("Thompson") == "TMPS"


# --------------------------------------------------------------------------- the metric


def test_name_and_signature_say_what_it_is():
    metric = Badger()
    sig = metric.signature()
    for setting in ("norm:lc-nopunct", "phon:dmetaphone-primary-4", "bwt:rotations-nomarker",
                    "measure:swg-windowed-affine", "sub:5/3/-3", "gap:5+1", "window:100", "combine:mean"):
        assert setting in sig
    assert sig.startswith("BADGER-like|")
    # The grid does not reproduce the original tool's: the original's name is not offered.
    names = Registry(use_entry_points=False).names
    assert "BADGER-like" in names and "BADGER" not in names


def test_combine_mean_and_max(mutt_suite):
    trials = mutt_suite.of("passive")[:20]
    cands, refs = [t.original for t in trials], [list(t.refs(10)) for t in trials]
    per_ref = np.array([[Badger().similarity(c, r) for r in rs] for c, rs in zip(cands, refs)])
    np.testing.assert_allclose(Badger().score(cands, refs), per_ref.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(Badger(combine="max").score(cands, refs), per_ref.max(axis=1), rtol=1e-12)
    assert Badger().similarity(cands[0], cands[0]) == 1.0


def _reference_grid(data_dir) -> dict[str, list[float]]:
    rows = (data_dir / "mutt" / "badger" / "accuracy.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return {c: [float(v) for v in rest] for c, *rest in (r.split("\t") for r in rows)}


@pytest.mark.parametrize("corruption,refs", [("det_sub", 5), ("sem_opps", 10), ("remove_prep", 20)])
def test_grid_cells_within_two_points_of_the_original(data_settings, data_dir, corruption, refs):
    # Only these 3 of the 15 given cells are within 2 points (docs/metrics.md has the whole grid); the test
    # keeps them there so a change to any step shows.
    original = _reference_grid(data_dir)[corruption][(5, 10, 20).index(refs)]
    table = run(load_mutt_experiments(data_settings, (corruption,)), ["BADGER-like"], [refs],
                data_settings).accuracy()
    assert abs(float(table["accuracy"].iloc[0]) - original) <= 2.0
