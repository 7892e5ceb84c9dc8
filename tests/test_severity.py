"""Severity: corruption strength parameters on real (sample) sentences, the curve table, and when a curve falls:
beyond the tie rule, and for a pass rate beyond sampling noise too."""
from __future__ import annotations

import pytest

from muttlab.corruptions.generate import GENERATORS, STRENGTHS, double_pp, drop_content, remove_prep, swap_chunks, typo
from muttlab.sources import load_sample_scenes
from muttlab.errors import MuttlabError
from muttlab.resources.spacy_nlp import parse
from muttlab.settings import Settings
from muttlab.severity import mean_drop_fall, pass_rate_fall, severity_curve

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


def test_a_mean_drop_falls_only_beyond_the_tie_rule():
    assert mean_drop_fall([10.0, 20.0, 20.0], [1, 2, 3]) == ""
    assert mean_drop_fall([10.0, 30.0, 20.0], [1, 2, 3]) == "no: mean drop falls from strength 2 to 3"
    # Within the tie rule (1e-9 x max(1, |value|)) a step down is rounding; just beyond it, a fall.
    assert mean_drop_fall([0.4448493795, 0.4448493787], [2, 3]) == ""
    assert mean_drop_fall([0.4448493795, 0.4448493775], [2, 3]) == "no: mean drop falls from strength 2 to 3"


def test_a_pass_rate_falls_only_beyond_sampling_noise():
    # 80/100 then 70/100: 95% Wilson intervals 71.1-86.7% and 60.4-78.1% overlap, so the step may be noise.
    assert pass_rate_fall([80, 70], [100, 100], [1, 2]) == ""
    # 90/100 then 50/100: 82.6-94.5% against 40.4-59.6%, a fall no sample of this size explains.
    assert pass_rate_fall([90, 50], [100, 100], [1, 2]) == (
        "no: pass rate falls from strength 1 to 2 (95% CI 82.6–94.5% vs 40.4–59.6%)")
    # A slow slide: no step is beyond the noise, the first strength against the last is.
    assert pass_rate_fall([90, 80, 70, 60], [100] * 4, [1, 2, 3, 4]).startswith(
        "no: pass rate falls from strength 1 to 3")
    # One sentence: 1/1 then 0/1 is within the noise of a single sentence.
    assert pass_rate_fall([1, 0], [1, 1], [2, 3]) == ""
    assert pass_rate_fall([40, 60, 90], [100] * 3, [1, 2, 3]) == ""


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


def test_every_type_and_strength_starts_from_one_parse_that_no_generator_changes(monkeypatch, tmp_path):
    from muttlab import api, severity
    from muttlab.resources import spacy_nlp

    items = [(str(s["id"]), s["original"], tuple(s["references"])) for s in load_sample_scenes()]
    sentences = tuple(s for _, s, _ in items)
    severity.parsed.cache_clear()
    severity._corrupted.cache_clear()
    calls = []
    monkeypatch.setattr(spacy_nlp, "parse", lambda texts: calls.append(len(texts)) or parse(texts))
    # What a server's warm-up does: parse the default sentences (without a data dir, the sample's scenes) and
    # corrupt them for the page's first curve, which then runs no generator.
    settings = Settings(cache_dir=tmp_path, use_cache=False, seed=SEED)
    assert api.prepare_severity(settings, "typo", [1, 2, 3]) == len(sentences)
    generators = dict(GENERATORS)
    monkeypatch.setattr(severity, "GENERATORS", {})
    prepared = severity.strength_items(items, "typo", [2, 3], SEED)
    with pytest.raises(KeyError):  # a strength the warm-up did not make is made when asked
        severity.strength_items(items, "typo", [1, 4], SEED)
    monkeypatch.setattr(severity, "GENERATORS", generators)
    severity._corrupted.cache_clear()
    assert severity.strength_items(items, "typo", [2, 3], SEED) == prepared and prepared[0]
    shared = {t: severity.strength_items(items, t, [1, 2, 3], SEED) for t in sorted(STRENGTHS)}
    assert calls == [len(sentences)]  # one parse, before any curve, for all five types
    with pytest.raises(MuttlabError, match="corruption is needed"):
        api.prepare_severity(settings, strengths=[1, 2])
    assert [d.to_json() for d in severity.parsed(sentences)] == [d.to_json() for d in parse(list(sentences))]
    # Each type's corruptions are those of a parse of its own: one type's generator left nothing for the next.
    for corruption, (kept, corrupted) in shared.items():
        made = {k: [] for k in (1, 2, 3)}
        for item, doc in zip(items, parse(list(sentences))):
            outs = {k: GENERATORS[corruption](doc, SEED, strength=k) for k in (1, 2, 3)}
            if all(o and o != item[1].strip() for o in outs.values()):
                for k in made:
                    made[k].append(outs[k])
        assert corrupted == made and kept, corruption
