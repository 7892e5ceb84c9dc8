"""TER from remembered (candidate, reference) edits equals sacrebleu's own multi-reference sentence TER on
MUTT trials, at every pool size, when one metric object scores the nested 5/10/20-reference pools in turn."""
from __future__ import annotations

import numpy as np
from sacrebleu.metrics import TER

from muttlab.sources import MUTT_REF_COUNTS
from muttlab.metrics.sacre import Ter


def _grid(suite, step):
    """Both sides of every ``step``-th trial of every set, at every pool size, as the runner batches them."""
    for name in suite.corruptions():
        trials = suite.of(name)[::step]
        for k in MUTT_REF_COUNTS:
            refs = [list(t.refs(k)) for t in trials]
            yield [t.original for t in trials], refs
            yield [t.corrupted for t in trials], refs


def test_pooled_ter_equals_sacrebleu_on_each_pool(mutt_suite):
    ours = Ter()
    batches = list(_grid(mutt_suite, 8))
    scored = [ours.score(cands, refs) for cands, refs in batches]
    # A fresh sacrebleu object per setting, each pool scored whole by sacrebleu itself.
    oracle = TER()
    assert sum(len(c) for c, _ in batches) > 1500
    for (cands, refs), got in zip(batches, scored):
        expected = np.array([oracle.sentence_score(c, r).score for c, r in zip(cands, refs)])
        assert np.array_equal(got, expected)
    # The nested pools did share pairs: fewer pairs computed than (candidate, reference) slots scored.
    slots = sum(len(r) for _, refs in batches for r in refs)
    assert len(ours._edits) < slots / 2


def test_case_and_normalisation_settings_reach_the_pairs(mutt_suite):
    cands, refs = next(_grid(mutt_suite, 40))
    cands = [c.upper() if i % 2 else c for i, c in enumerate(cands)]
    for kwargs in ({"case_sensitive": True}, {"normalized": True}):
        oracle = TER(**kwargs)
        expected = np.array([oracle.sentence_score(c, r).score for c, r in zip(cands, refs)])
        assert np.array_equal(Ter(**kwargs).score(cands, refs), expected)


def edit_pairs(suite, step: int, long_pairs: int) -> list[tuple[list[str], list[str]]]:
    """Tokenised (hypothesis, reference) pairs: every ``step``-th distinct (candidate, reference) pair of the MUTT
    grid, then ``long_pairs`` long shuffled concatenations of its sentences (wide beams, many shift candidates,
    the 1,000-candidate limit), then the two empty sides."""
    pairs = list(dict.fromkeys((c, r) for t in suite.trials for c in (t.original, t.corrupted)
                               for r in t.refs(20)))[::step]
    tokenize = TER()._preprocess_segment
    pairs = [(tokenize(c).split(), tokenize(r).split()) for c, r in pairs]
    rng = np.random.default_rng(0)
    sentences = [h for h, _ in pairs]
    for k in range(long_pairs):
        words = [w for i in rng.integers(0, len(sentences), int(rng.integers(2, 12))) for w in sentences[i]]
        rng.shuffle(words)
        ref = [w for i in rng.integers(0, len(sentences), int(rng.integers(1, 12))) for w in sentences[i]]
        pairs.append((words[: int(rng.integers(1, len(words) + 1))] if k % 3 else words, ref))
    return pairs + [([], ["a", "dog"]), (["a", "dog"], [])]


def compiled_edits(pairs) -> list[int]:
    """The compiled kernel's edit count of each pair (words numbered in one shared vocabulary)."""
    from muttlab.metrics.ter_kernel import edits

    vocab: dict[str, int] = {}

    def ids(words):
        return np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int64)

    return [int(edits(ids(h), ids(r))) for h, r in pairs]


def test_compiled_edits_equal_sacrebleus_on_real_and_long_pairs(mutt_suite, monkeypatch):
    """Every 49th distinct (candidate, reference) pair of the grid and 25 long shuffled ones, enough that
    sacrebleu's own search reaches its 1,000-candidate limit and widens its beam on some of them (checked
    below). The same check on every 7th pair and 200 long ones (over 7,000 pairs) is
    ``benchmarks/bench_ter_kernel.py``, which also times the kernel against sacrebleu."""
    from sacrebleu.metrics import lib_ter

    pairs = edit_pairs(mutt_suite, 49, 25)
    reached = []
    shift = lib_ter._shift

    def counted(*args):
        found = shift(*args)
        reached.append(found[2])
        return found

    monkeypatch.setattr(lib_ter, "_shift", counted)
    expected = [lib_ter.translation_edit_rate(h, r)[0] for h, r in pairs]
    assert max(reached) >= lib_ter._MAX_SHIFT_CANDIDATES
    assert any(h and len(r) / len(h) / 2 > lib_ter._BEAM_WIDTH for h, r in pairs)
    assert len(pairs) > 700 and max(len(h) for h, _ in pairs) > 80
    assert compiled_edits(pairs) == expected
