"""TERp-style: exactly sacrebleu's TER with the extensions off (on MUTT and SICK sentences), cheaper edits
for stems, WordNet synonyms and paraphrases with them on, and the WordNet set-up."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from sacrebleu.metrics import TER

from muttlab.settings import Settings
from muttlab.engine.sources import load_sick
from muttlab.metrics.terp import COST_PHRASE_PER_WORD, COST_STEM, COST_SYNONYM, PhraseTable, TerPlus, _Matcher
from muttlab.resources.wordnet import LEXNAMES, WordNetMissing, load_wordnet, prepare_root

PLAIN = TerPlus(stems=False, synonyms=False, paraphrases=False)


@pytest.fixture(scope="module")
def extended():
    return TerPlus(stems=True, synonyms=True, paraphrases=False)


def _sacrebleu_ter(cands, refs):
    ter = TER()
    return np.array([ter.sentence_score(c, r).score / 100 for c, r in zip(cands, refs)])


def test_equals_sacrebleu_ter_on_mutt(mutt_suite):
    cands, refs = [], []
    for name in mutt_suite.corruptions():
        for t in mutt_suite.of(name)[::4]:
            cands += [t.original, t.corrupted]
            refs += [list(t.refs(5))] * 2
    ours = TerPlus(stems=False, synonyms=False, paraphrases=False).score(cands, refs)
    assert len(cands) > 1000
    np.testing.assert_allclose(ours, _sacrebleu_ter(cands, refs), rtol=0, atol=1e-12)


def test_equals_sacrebleu_ter_on_sick(data_dir):
    pairs = load_sick(Settings(data_dir=data_dir))[::8]
    cands = [p.sentence_b for p in pairs]
    refs = [[p.sentence_a] for p in pairs]
    assert len(cands) > 1000
    np.testing.assert_allclose(PLAIN.score(cands, refs), _sacrebleu_ter(cands, refs), rtol=0, atol=1e-12)


def test_multi_reference_rule_is_ters():
    # Fewest edits against any one reference / average reference length (sacrebleu's TER convention).
    refs = [["a dog runs on the grass", "a dog runs", "the cat is asleep on a sofa today"]]
    assert PLAIN.score(["a dog runs"], refs)[0] == 0.0
    assert PLAIN.score(["a dog runs fast"], refs)[0] == pytest.approx(1 / ((6 + 3 + 8) / 3))


@pytest.mark.parametrize("hyp, ref, cost", [
    ("a man is riding a large horse", "a man is riding a big horse", COST_SYNONYM),   # WordNet synonyms
    ("the boys play in the park", "the boy play in the park", COST_STEM),             # same stem
    ("the boy plays in the park", "the boy playing in the park", COST_STEM),
])
def test_stem_and_synonym_variants_cost_less(extended, hyp, ref, cost):
    n = len(ref.split())
    assert PLAIN.score([hyp], [[ref]])[0] == pytest.approx(1 / n)
    assert extended.score([hyp], [[ref]])[0] == pytest.approx(cost / n)


def test_near_synonym_trials_score_better_than_ter(mutt_suite, extended):
    # MUTT's near_syms corruptions swap a word for a near synonym. Scored against the original, every
    # one-word swap that WordNet or the Snowball stemmer relates must cost TERp strictly less than TER.
    from nltk.stem.snowball import SnowballStemmer

    wn, stem = load_wordnet(), SnowballStemmer("english").stem
    related = []
    for t in mutt_suite.of("near_syms"):
        a, b = t.original.lower().split(), t.corrupted.lower().split()
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        if len(a) == len(b) and len(diff) == 1:
            x, y = diff[0]
            if stem(x) == stem(y) or {s.name() for s in wn.synsets(x)} & {s.name() for s in wn.synsets(y)}:
                related.append(t)
    assert len(related) >= 20
    cands, refs = [t.corrupted for t in related], [[t.original] for t in related]
    ter, terp = PLAIN.score(cands, refs), extended.score(cands, refs)
    assert np.all(terp < ter)


def test_paraphrase_table_gives_phrase_substitutions(tmp_path):
    # A table in Meteor's format: probability, phrase, paraphrase on three lines.
    table_file = tmp_path / "paraphrase-test.gz"
    with gzip.open(table_file, "wt", encoding="utf-8") as fh:
        fh.write("0.5\nis playing\nplays\n0.1\nsofa\ncouch\n")
    table = PhraseTable(table_file, cache_dir=tmp_path / "cache")
    assert table.pairs("a man is playing guitar".split(), "a man plays guitar".split()) == {(4, 3): [(2, 1)]}
    # Hashed once, then read back from the cache.
    again = PhraseTable(table_file, cache_dir=tmp_path / "cache")
    assert np.array_equal(again._src, table._src)

    metric = TerPlus(stems=False, synonyms=False, paraphrases=True)
    metric._table, metric._matcher = table, _Matcher(False, False, table)  # this table, not Meteor's
    hyp, ref = "a man is playing guitar", "a man plays guitar"
    assert PLAIN.score([hyp], [[ref]])[0] == pytest.approx(2 / 4)  # one substitution + one deletion
    assert metric.score([hyp], [[ref]])[0] == pytest.approx(2 * COST_PHRASE_PER_WORD / 4)


def test_signature_and_orientation(extended):
    assert TerPlus.higher_is_better is False
    assert "stem:yes|syn:yes|para:no" in extended.signature()


def test_wordnet_reader_over_debian_files(tmp_path):
    root = prepare_root(cache_dir=tmp_path / "wn")
    lines = (root / "lexnames").read_text().splitlines()
    assert len(lines) == len(LEXNAMES) == 45
    assert lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    wn = load_wordnet()
    assert {s.name() for s in wn.synsets("big")} & {s.name() for s in wn.synsets("large")}


def test_missing_wordnet_says_how_to_install(tmp_path):
    with pytest.raises(WordNetMissing, match="apt-get install wordnet-base"):
        prepare_root(source=tmp_path / "nowhere", cache_dir=tmp_path / "wn")
