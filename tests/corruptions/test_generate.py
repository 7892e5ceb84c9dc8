"""Property tests of the spaCy generators on real sentences (the sample scenes and SICK sentences)."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from muttlab.corruptions.generate import (GENDER_PAIRS, GENERATORS, NUMBER_WORDS, double_pp, generate,
                                  prepositional_phrases, remove_prep, swap_chunks)
from muttlab.settings import Settings
from muttlab.sources import load_sample_scenes, load_sick
from muttlab.resources.spacy_nlp import load_nlp, parse

SEED = 13
ARTICLES = ("a", "an", "the")


@pytest.fixture(scope="module")
def sentences(data_dir):
    sick = load_sick(Settings(data_dir=data_dir))
    from_sick = list(dict.fromkeys(p.sentence_a.strip() for p in sick[:400]))[:150]
    return [s["original"] for s in load_sample_scenes()] + from_sick


@pytest.fixture(scope="module")
def docs(sentences):
    return parse(sentences)


@pytest.fixture(scope="module")
def outputs(docs):
    return {name: [(doc, fn(doc, SEED)) for doc in docs] for name, fn in GENERATORS.items()}


def tokens(text: str) -> list[str]:
    return [t.lower_ for t in load_nlp().tokenizer(text)]


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


def applied(outputs, name):
    made = [(doc, out) for doc, out in outputs[name] if out is not None]
    assert len(made) >= 10, f"{name} applied to only {len(made)} sentences"
    return made


def test_double_pp_contains_a_pp_twice(outputs):
    for doc, out in applied(outputs, "double_PP"):
        ok = False
        for start, end in prepositional_phrases(doc):
            pp = doc[start:end].text
            if f"{pp} {pp}" in out and squash(out.replace(f"{pp} {pp}", pp, 1)) == squash(doc.text):
                ok = True
        assert ok, (doc.text, out)


def test_remove_prep_removes_exactly_one_preposition(outputs):
    for doc, out in applied(outputs, "remove_prep"):
        before, after = Counter(t.lower_ for t in doc), Counter(tokens(out))
        removed, added = before - after, after - before
        assert not added, (doc.text, out)
        assert sum(removed.values()) == 1, (doc.text, out)
        word = next(iter(removed))
        assert any(t.lower_ == word and t.pos_ == "ADP" for t in doc)


def test_swap_chunks_keeps_the_words_and_changes_the_order(outputs):
    for doc, out in applied(outputs, "swap_chunks"):
        original = [t.lower_ for t in doc]
        shuffled = tokens(out)
        assert Counter(shuffled) == Counter(original), (doc.text, out)
        assert shuffled != original
        if doc[-1].text in ".!?":
            assert out.endswith(doc[-1].text)


def test_subject_object_swap_keeps_the_words(outputs):
    for doc, out in applied(outputs, "subj_obj_swap"):
        assert Counter(tokens(out)) == Counter(t.lower_ for t in doc)
        assert tokens(out) != [t.lower_ for t in doc]


def test_typo_swaps_two_letters_of_one_word(outputs):
    for doc, out in applied(outputs, "typo"):
        a, b = doc.text.split(), out.split()
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(a) == len(b) and len(diff) == 1
        x, y = diff[0]
        assert sorted(x) == sorted(y) and sum(c != d for c, d in zip(x, y)) == 2


def test_gender_swap_changes_only_gendered_words(outputs):
    gendered = {w for pair in GENDER_PAIRS for w in pair}
    for doc, out in applied(outputs, "gender_swap"):
        a, b = [t.lower_ for t in doc], tokens(out)
        assert len(a) == len(b)
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        assert changed and all(x in gendered and y in gendered for x, y in changed)


def test_number_change_introduces_another_count(outputs):
    for doc, out in applied(outputs, "number_change"):
        before, after = Counter(t.lower_ for t in doc), Counter(tokens(out))
        assert any(w in NUMBER_WORDS for w in after - before), (doc.text, out)


def test_drop_content_drops_one_modifier(outputs):
    for doc, out in applied(outputs, "drop_content"):
        before, after = Counter(t.lower_ for t in doc), Counter(tokens(out))
        removed = before - after
        # an article may change with the word after it ("an old man" -> "a man")
        removed.pop("an", None), removed.pop("a", None)
        assert sum(removed.values()) == 1 and sum(before.values()) - sum(after.values()) == 1, (doc.text, out)


def test_study_templates(outputs):
    for doc, out in applied(outputs, "neg_subj"):
        assert re.match(r"There (is|are) no ", out)
    for doc, out in applied(outputs, "neg_verb"):
        assert Counter(tokens(out))["not"] == Counter(t.lower_ for t in doc)["not"] + 1
    for doc, out in applied(outputs, "det_sub"):
        assert out != doc.text
        assert [w for w in tokens(out) if w not in ARTICLES] == [t.lower_ for t in doc if t.lower_ not in ARTICLES]


@pytest.mark.parametrize("name,sentence", [
    ("double_PP", "A man is sleeping"), ("remove_prep", "A man is sleeping"), ("swap_chunks", "Dogs"),
    ("subj_obj_swap", "A man is sleeping on the sofa"), ("gender_swap", "A man and a woman are dancing"),
    ("gender_swap", "A dog is running"), ("number_change", "A cat sleeps"), ("typo", "A cat is on it"),
    ("drop_content", "A man is eating"), ("neg_subj", "Someone rides a horse"),
    ("subj_obj_swap", "A man is holding two frogs"),
])
def test_generators_say_when_they_do_not_apply(name, sentence):
    assert GENERATORS[name](parse([sentence])[0], SEED) is None


def test_generators_are_reproducible_and_batch_independent(docs, outputs):
    alone = parse([docs[3].text])[0]
    for name, fn in GENERATORS.items():
        assert fn(alone, SEED) == outputs[name][3][1]
    again = generate(docs, list(GENERATORS), SEED)
    for i, made in enumerate(again):
        for name, out in made.items():
            assert outputs[name][i][1] == out


def test_the_seed_matters(docs):
    first = [swap_chunks(d, 1) for d in docs]
    second = [swap_chunks(d, 2) for d in docs]
    assert any(a != b for a, b in zip(first, second) if a and b)


def test_remove_prep_and_double_pp_use_the_same_phrase_choice(docs):
    for doc in docs[:40]:
        a, b = double_pp(doc, SEED), remove_prep(doc, SEED)
        assert (a is None) == (b is None)
