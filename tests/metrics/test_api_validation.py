"""Fuzz the metric API: ``Metric.score`` of every cheap built-in metric with bad and odd inputs.

Every malformed call must raise the one documented error, MetricError, naming what is wrong; nothing from
inside a library, and nothing scored silently (a reference list passed as one string used to be scored
against its characters). Well-formed but unusual text (emoji, right-to-left, U+2028) must score.
"""
from __future__ import annotations

import math
import random
import sqlite3

import numpy as np
import pytest

from muttlab.errors import MuttlabError
from muttlab.metrics.base import MetricError, MetricUnavailable
from muttlab.metrics.registry import Registry
from muttlab.settings import Limits, set_limits

# Cheap: no JVM, no trained model; TERp's and METEOR's own tests cover those two.
CHEAP = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D", "sentBLEU", "chrF", "TER", "DeltaBLEU", "BADGER-like", "W2V-AVG"]
SEED = 20261123
CASES_PER_METRIC = 60


@pytest.fixture(scope="module")
def registry():
    reg = Registry(use_entry_points=False)
    yield reg
    reg.close()


@pytest.fixture(autouse=True)
def default_limits():
    set_limits(Limits())
    yield
    set_limits(None)


def metric_or_skip(registry, name):
    try:
        return registry.get(name)
    except MetricUnavailable as exc:
        pytest.skip(str(exc))


GOOD_CAND = "A man is riding a bicycle down the street."
GOOD_REFS = ["A man rides a bike on the road.", "Someone is cycling along a street."]

# (candidates, references, what the message must mention)
MALFORMED = [
    ("A man rides.", [GOOD_REFS], "candidates must be a list"),
    (b"A man rides.", [GOOD_REFS], "candidates must be a list"),
    ([GOOD_CAND], [GOOD_REFS[0]], "must be a list of reference sentences"),        # refs as one string
    ([GOOD_CAND], GOOD_REFS[0], "references must be"),
    ([GOOD_CAND], [[None]], "must be a string"),
    ([None], [GOOD_REFS], "candidate 0 must be a string"),
    ([float("nan")], [GOOD_REFS], "candidate 0 must be a string"),
    ([GOOD_CAND], [[float("nan")]], "must be a string"),
    ([GOOD_CAND], [[1, 2]], "must be a string"),
    ([b"bytes"], [GOOD_REFS], "must be a string"),
    ([GOOD_CAND], [{"a": 1}], "must be a list of reference sentences"),
    ([GOOD_CAND], [{"a man", "a dog"}], "must be a list of reference sentences"),
    ([GOOD_CAND], [None], "must be a list of reference sentences"),
    ([GOOD_CAND], None, "references must be"),
    (None, [GOOD_REFS], "candidates must be"),
    (42, [GOOD_REFS], "candidates must be"),
    ([GOOD_CAND, GOOD_CAND], [GOOD_REFS], "2 candidates but 1 reference lists"),
    ([GOOD_CAND], [], "1 candidates but 0 reference lists"),
    ([GOOD_CAND], [[]], "empty reference list"),
    (["A man\ud800 rides."], [GOOD_REFS], "lone surrogate"),
    ([GOOD_CAND], [["A \udfff man."]], "lone surrogate"),
    (["a " * 500], [GOOD_REFS], "has 500 words.*MUTTLAB_MAX_WORDS"),
    (["word " * 5000], [GOOD_REFS], "MUTTLAB_MAX_CHARS"),
    ([GOOD_CAND], [["word " * 201]], "MUTTLAB_MAX_WORDS"),
    (["x" * 2001], [GOOD_REFS], "MUTTLAB_MAX_CHARS"),
    ([GOOD_CAND], [GOOD_REFS * 26], "MUTTLAB_MAX_REFS"),
]

ODD_BUT_FINE = [
    ["A man\u2028rides\u2029a bike.", GOOD_REFS],
    ["🙂 A man 🚴 rides a bike 🙂", ["🚴 a man rides a bike"]],
    ["رجل يركب دراجة", ["رجل يركب دراجة في الشارع", "A man rides."]],
    ["A man \u202erides\u202c a bike.", GOOD_REFS],
    ["a", ["a"]],
    ["café naïve coöperate", ["cafe naive cooperate"]],
    ["A man rides a bike.", GOOD_REFS + ["   "]],  # a blank reference is allowed and matches nothing
    ["A man rides a bike.", ["", "  "]],
    ["word " * 200, ["word " * 200]],  # at the limit, not over it
]


@pytest.mark.parametrize("name", CHEAP)
def test_malformed_calls_raise_metric_error(registry, name):
    metric = metric_or_skip(registry, name)
    for candidates, references, words in MALFORMED:
        with pytest.raises(MetricError, match=words):
            metric.score(candidates, references)


@pytest.mark.parametrize("name", CHEAP)
def test_unusual_but_valid_text_scores(registry, name):
    metric = metric_or_skip(registry, name)
    candidates = [c for c, _ in ODD_BUT_FINE]
    references = [r for _, r in ODD_BUT_FINE]
    scores = metric.score(candidates, references)
    assert scores.shape == (len(candidates),) and np.isfinite(scores).all()
    # One at a time gives the same numbers (CIDEr-D excepted: its document frequencies come from the batch).
    if not metric.corpus_dependent:
        alone = np.array([metric.score([c], [r])[0] for c, r in ODD_BUT_FINE])
        assert np.allclose(alone, scores)


def _random_bad(rng: random.Random):
    """A random malformed call: a good batch with one thing broken in a random place."""
    n = rng.randint(1, 4)
    cands = [rng.choice([GOOD_CAND, "A dog runs.", "Two people talk."]) for _ in range(n)]
    refs = [list(GOOD_REFS) for _ in range(n)]
    i = rng.randrange(n)
    poison = [None, float("nan"), float("inf"), 3, b"x", "\ud83d", ["nested"], {"k": "v"},
              "w " * 300, "x" * 3000]
    kind = rng.randrange(6)
    if kind == 0:
        cands[i] = rng.choice(poison)
    elif kind == 1:
        refs[i][rng.randrange(len(refs[i]))] = rng.choice(poison)
    elif kind == 2:
        refs[i] = rng.choice([GOOD_REFS[0], None, 5, {"a"}, [], [None, ""], GOOD_REFS * 30])
    elif kind == 3:
        refs = refs[:-1] if rng.random() < 0.5 else refs + [GOOD_REFS]
    elif kind == 4:
        cands = rng.choice([GOOD_CAND, None, 7, {"a": "b"}, b"bytes"])
    else:
        refs = rng.choice([GOOD_REFS[0], None, 3.5, "".join(GOOD_REFS)])
    return cands, refs


@pytest.mark.parametrize("name", CHEAP)
def test_random_malformed_calls(registry, name):
    metric = metric_or_skip(registry, name)
    rng = random.Random(f"{SEED}-{name}")
    for _ in range(CASES_PER_METRIC):
        cands, refs = _random_bad(rng)
        with pytest.raises(MetricError):
            metric.score(cands, refs)


def test_limits_come_from_the_settings(registry):
    metric = registry.get("BLEU-4")
    set_limits(Limits(max_words=5, max_refs=2))
    with pytest.raises(MetricError, match=r"candidate 0 has 6 words, over the limit of 5 .*MUTTLAB_MAX_WORDS"):
        metric.score(["one two three four five six"], [["one two"]])
    with pytest.raises(MetricError, match=r"candidate 0 has 3 references, over the limit of 2 .*MUTTLAB_MAX_REFS"):
        metric.score(["one two"], [["a", "b", "c"]])
    assert math.isfinite(metric.score(["one two three"], [["one two", "three"]])[0])
    assert Limits.from_env({"MUTTLAB_MAX_WORDS": "7", "MUTTLAB_MAX_REFS": "3"}) == Limits(max_words=7, max_refs=3)
    with pytest.raises(MuttlabError, match="MUTTLAB_MAX_WORDS"):
        Limits.from_env({"MUTTLAB_MAX_WORDS": "zero"})


def test_a_sentence_checked_once_is_checked_again_under_tighter_limits(registry):
    """check_batch remembers the sentences it found valid, for the limits it checked them under only; and in a
    batch with a repeated sentence, the error names the sentence's first occurrence."""
    metric = registry.get("BLEU-4")
    long_ref = "a man in a red shirt rides a bike"
    assert math.isfinite(metric.score(["a man rides"], [[long_ref]])[0])
    set_limits(Limits(max_words=5))
    with pytest.raises(MetricError, match=r"reference 0 of candidate 0 has 9 words"):
        metric.score(["a man rides"], [[long_ref]])
    with pytest.raises(MetricError, match=r"reference 1 of candidate 1 has 9 words"):
        metric.score(["a man rides", "a bike", "a dog"], [["a man"], ["a bike", long_ref], [long_ref]])


def test_tuples_and_arrays_are_lists(registry):
    metric = registry.get("BLEU-4")
    as_lists = metric.score([GOOD_CAND, "A dog runs."], [GOOD_REFS, ["A dog is running."]])
    as_tuples = metric.score((GOOD_CAND, "A dog runs."), (tuple(GOOD_REFS), ("A dog is running.",)))
    assert np.array_equal(as_lists, as_tuples)
    assert np.array_equal(metric.score(np.array([GOOD_CAND]), [GOOD_REFS]), as_lists[:1])


def test_service_layer_checks_before_the_cache(tmp_path):
    """``muttlab.api.score`` (the Playground's path) refuses a malformed batch before any cache key is made
    of it: a reference list given as one string is never scored against its characters."""
    from muttlab import api
    from muttlab.settings import Settings

    settings = Settings(cache_dir=tmp_path, workers=1)
    for candidates, references, words in MALFORMED[:6]:
        with pytest.raises(MetricError, match=words):
            api.score(settings, ["BLEU-4", "chrF"], candidates, references)
    path = tmp_path / "scores.sqlite"
    if path.exists():
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 0
    table = api.score(settings, ["BLEU-4", "chrF"], [GOOD_CAND], [GOOD_REFS])
    assert list(table["problem"]) == ["", ""] and np.isfinite(table["score"]).all()
