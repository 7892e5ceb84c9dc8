"""ΔBLEU (Galley et al. 2015): BLEU when every weight is 1 (checked against sacrebleu on MUTT data), the
paper's p_n on a hand-computed example, and the negative-weight behaviour plain BLEU cannot show."""
from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU

from muttlab.cli import main
from muttlab.human.dbleu_io import read_weighted_segments
from muttlab.errors import DataError
from muttlab.metrics.base import MetricError
from muttlab.metrics.delta_bleu import (MAX_N, DeltaBleu, corpus_bleu, corpus_delta_bleu, segment_stats,
                                        sentence_bleu, sentence_delta_bleu)
from muttlab.metrics.registry import Registry
from muttlab.metrics.tokenize import ptb_tokenize


@pytest.fixture(scope="module")
def segments(mutt_suite):
    """Every MUTT candidate (original and corruption), PTB-tokenised, with its 20 references."""
    hyps, refs = [], []
    for t in mutt_suite.trials:
        for cand in (t.original, t.corrupted):
            hyps.append(ptb_tokenize(cand))
            refs.append([ptb_tokenize(r) for r in t.refs(20)])
    return hyps, refs


@pytest.mark.parametrize("k", [1, 5, 20])
def test_unit_weights_equal_sacrebleu_corpus_bleu(segments, k):
    hyps, refs = segments
    stats = segment_stats(hyps, [[(r, 1.0) for r in rs[:k]] for rs in refs])
    expected = sacrebleu.corpus_bleu(hyps, [[rs[j] for rs in refs] for j in range(k)], tokenize="none").score / 100
    assert corpus_bleu(stats.sum(axis=0)) == pytest.approx(expected, abs=1e-9)


def test_unit_weights_equal_sacrebleu_on_any_subset(segments):
    # The observation units of the paper's §5 are sums of rows: any subset must still be BLEU.
    hyps, refs = segments
    stats = segment_stats(hyps, [[(r, 1.0) for r in rs[:5]] for rs in refs])
    rng = np.random.default_rng(7)
    for _ in range(5):
        idx = rng.choice(len(hyps), size=40, replace=False)
        expected = sacrebleu.corpus_bleu([hyps[i] for i in idx], [[refs[i][j] for i in idx] for j in range(5)],
                                         tokenize="none").score / 100
        assert corpus_bleu(stats[idx].sum(axis=0)) == pytest.approx(expected, abs=1e-9)


def test_sentence_level_equals_sacrebleu_add_one(segments):
    hyps, refs = segments
    bleu = BLEU(tokenize="none", smooth_method="add-k", smooth_value=1, effective_order=True)
    for i in range(0, len(hyps), 9):
        ours = sentence_delta_bleu(hyps[i], [(r, 1.0) for r in refs[i][:10]])
        assert ours == pytest.approx(bleu.sentence_score(hyps[i], refs[i][:10]).score / 100, abs=1e-9)


def test_hand_computed_statistics():
    # Galley et al. 2015, §3: numerator of p_n takes, per hypothesis n-gram, the max over the references
    # containing it of w * clipped count; the denominator is max_j w_j times the hypothesis n-gram count.
    # "a b c" vs ("a b d", +1), ("a c", -0.5):
    #   unigrams a -> max(1, -0.5) = 1, b -> 1, c -> -0.5          : 1.5 / 3
    #   bigrams  "a b" -> 1, "b c" -> in no reference -> 0         : 1 / 2
    #   trigram  "a b c" -> 0                                       : 0 / 1
    #   effective reference length: positive references only -> 3
    row = segment_stats(["a b c"], [[("a b d", 1.0), ("a c", -0.5)]])[0]
    assert row.tolist() == [1.5, 1.0, 0.0, 0.0, 3.0, 2.0, 1.0, 0.0, 3.0, 3.0]


def test_negative_references_separate_what_plain_bleu_cannot():
    good = ["the brown dog runs across the green field", "a child is eating a red apple in the kitchen"]
    bad = ["the black cat sleeps under the old table", "a woman is cutting an onion with a knife"]
    weighted = [[(g, 1.0), (b, -1.0)] for g, b in zip(good, bad)]
    plain = [[(g, 1.0), (b, 1.0)] for g, b in zip(good, bad)]
    # Plain BLEU with both references: copying either one is a perfect score.
    assert corpus_delta_bleu(good, plain) == pytest.approx(1.0)
    assert corpus_delta_bleu(bad, plain) == pytest.approx(1.0)
    # ΔBLEU: copying the positive references is perfect, copying the negative ones scores nothing.
    assert corpus_delta_bleu(good, weighted) == pytest.approx(1.0)
    assert corpus_delta_bleu(bad, weighted) == 0.0
    scores = DeltaBleu().score_weighted(good + bad, weighted + weighted)
    assert scores[:2] == pytest.approx([1.0, 1.0]) and scores[2:].max() == 0.0


def test_partial_negative_match_lowers_the_score():
    # An n-gram found in a positive reference keeps its credit (the max over references); "bike" and the
    # n-grams around it occur only in the negative reference, so they cost instead of counting zero.
    refs = [("a man is riding a horse on the beach", 1.0), ("a man is riding a bike in the city", -0.8)]
    neutral = sentence_delta_bleu("a man is riding a bike", [refs[0], ("x", -0.8)])
    penalised = sentence_delta_bleu("a man is riding a bike", refs)
    assert 0 < penalised < neutral
    assert sentence_delta_bleu("a man is riding a horse", refs) == sentence_delta_bleu(
        "a man is riding a horse", [refs[0], ("x", -0.8)])


@pytest.mark.parametrize("refs, problem", [
    ([("a dog", -1.0), ("a cat", 0.0)], "no reference with a positive weight"),
    ([("a dog", 1.5)], "outside [-1, 1]"),
    ([], "no references"),
])
def test_bad_segments_are_rejected(refs, problem):
    with pytest.raises(MetricError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        segment_stats(["a dog"], [refs])


def test_metric_with_plain_references_is_smoothed_sentence_bleu(mutt_suite):
    trials = mutt_suite.of("neg_subj")[:30]
    metric = Registry(use_entry_points=False).get("DeltaBLEU")
    cands = [t.original for t in trials]
    refs = [list(t.refs(5)) for t in trials]
    plain = metric.score(cands, refs)
    weighted = metric.score_weighted(cands, [[(r, 1.0) for r in rs] for rs in refs])
    assert np.array_equal(plain, weighted)
    stats = segment_stats([ptb_tokenize(c) for c in cands], [[(ptb_tokenize(r), 1.0) for r in rs] for rs in refs])
    assert plain.tolist() == [sentence_bleu(row) for row in stats]
    assert "DeltaBLEU|n:4|smooth:add-k|k:1|eff:no|tok:ptb" in metric.signature()


# --------------------------------------------------------------------------- smoothing, against sacreBLEU

# (method, value): every sacreBLEU smoothing method, with its default value and, where it takes one, another.
SMOOTHINGS = [("none", None), ("floor", None), ("floor", 0.5), ("add-k", None), ("add-k", 0.3), ("exp", None)]


@pytest.fixture(scope="module")
def flickr_segments(data_dir):
    """Flickr8k: caption #0 of each of 400 images as the hypothesis, captions #1-4 as its references, all
    tokenised once with sacreBLEU's 13a tokenizer (both sides then split on whitespace)."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from muttlab.sources import load_flickr_captions
    from muttlab.settings import Settings

    tok = Tokenizer13a()
    captions = load_flickr_captions(Settings(data_dir=data_dir))
    images = sorted(captions)[:400]
    hyps = [tok(captions[i][0]) for i in images]
    refs = [[tok(c) for c in captions[i][1:5]] for i in images]
    return hyps, refs


def _with_sacrebleu(segments, method, value, effective_order):
    """The segments, their unit-weight statistics, and sacreBLEU's BLEU with the same smoothing setting."""
    hyps, refs = segments
    bleu = BLEU(tokenize="none", smooth_method=method, smooth_value=value, effective_order=effective_order)
    return hyps, refs, segment_stats(hyps, [[(r, 1.0) for r in rs] for rs in refs]), bleu


@pytest.mark.parametrize("effective_order", [False, True])
@pytest.mark.parametrize("method,value", SMOOTHINGS)
def test_sentence_smoothing_equals_sacrebleu(flickr_segments, method, value, effective_order):
    hyps, refs, stats, bleu = _with_sacrebleu(flickr_segments, method, value, effective_order)
    ours = [100 * sentence_bleu(row, MAX_N, method, value, effective_order) for row in stats]
    theirs = [bleu.sentence_score(h, rs).score for h, rs in zip(hyps, refs)]
    assert ours == pytest.approx(theirs, abs=1e-9)
    if method == "none":
        assert sum(t == 0 for t in theirs) > 10  # the sentences exercise the zero-match branches


@pytest.mark.parametrize("effective_order", [False, True])
@pytest.mark.parametrize("method,value", SMOOTHINGS)
def test_corpus_smoothing_equals_sacrebleu(flickr_segments, method, value, effective_order):
    hyps, refs, stats, bleu = _with_sacrebleu(flickr_segments, method, value, effective_order)
    # Small units (3 segments) often miss a 4-gram match, where the methods differ.
    units = [slice(i, i + 3) for i in range(0, 120, 3)] + [slice(0, len(hyps))]
    for unit in units:
        expected = bleu.corpus_score(hyps[unit], [[rs[j] for rs in refs[unit]] for j in range(4)]).score
        got = 100 * corpus_delta_bleu(hyps[unit], [[(r, 1.0) for r in rs] for rs in refs[unit]], MAX_N, method,
                                      value, effective_order)
        assert got == pytest.approx(expected, abs=1e-9), unit
        assert 100 * corpus_bleu(stats[unit].sum(axis=0), MAX_N, method, value, effective_order) == got


def test_metric_smoothing_is_in_the_signature_and_used(flickr_segments):
    hyps, refs = flickr_segments
    metric = DeltaBleu(smoothing="floor", smooth_value=0.5, effective_order=True, tokenize="none")
    assert "smooth:floor|k:0.5|eff:yes|tok:none" in metric.signature()
    bleu = BLEU(tokenize="none", smooth_method="floor", smooth_value=0.5, effective_order=True)
    assert (100 * metric.score(hyps[:50], refs[:50])).tolist() == pytest.approx(
        [bleu.sentence_score(h, rs).score for h, rs in zip(hyps[:50], refs[:50])], abs=1e-9)
    with pytest.raises(ValueError, match="unknown smoothing 'laplace'"):
        DeltaBleu(smoothing="laplace")
    with pytest.raises(MetricError, match="takes no value"):
        corpus_bleu(np.ones(10), MAX_N, "exp", 0.5)


@pytest.mark.parametrize("method,value", SMOOTHINGS)
def test_cli_smoothing_equals_sacrebleu(tmp_path, capsys, flickr_segments, method, value):
    hyps, refs = flickr_segments
    hyps, refs = hyps[:6], refs[:6]
    _write_jsonl(tmp_path / "six.jsonl",
                 [{"hypothesis": h, "references": [[r, 1.0] for r in rs]} for h, rs in zip(hyps, refs)])
    args = ["dbleu", str(tmp_path / "six.jsonl"), "--format", "json", "--smooth", method]
    if value is not None:
        args += ["--smooth-value", str(value)]
    assert main(args) == 0
    record = json.loads(capsys.readouterr().out)[0]
    bleu = BLEU(tokenize="none", smooth_method=method, smooth_value=value)
    assert record["delta_bleu"] == pytest.approx(bleu.corpus_score(hyps, [[rs[j] for rs in refs]
                                                                          for j in range(4)]).score, abs=1e-9)
    assert f"smooth:{method}" in record["signature"] and "tok:none" in record["signature"]


# --------------------------------------------------------------------------- files and the CLI

def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_jsonl_and_tsv_read_the_same(tmp_path):
    records = [{"hypothesis": "a dog runs", "references": [["a dog runs fast", 1.0], ["a cat sits", -0.5]]},
               {"hypothesis": "two men talk", "references": [["two men are talking", 0.6]]}]
    _write_jsonl(tmp_path / "in.jsonl", records)
    (tmp_path / "in.tsv").write_text("# comment\na dog runs\ta dog runs fast\t1.0\ta cat sits\t-0.5\n\n"
                                     "two men talk\ttwo men are talking\t0.6\n", encoding="utf-8")
    a, b = read_weighted_segments(tmp_path / "in.jsonl"), read_weighted_segments(tmp_path / "in.tsv")
    assert a.hypotheses == b.hypotheses == ["a dog runs", "two men talk"]
    assert a.references == b.references
    assert b.lines == [2, 4]


@pytest.mark.parametrize("text, message", [
    ('{"hypothesis": "a", "references": [["b", 1]]}\n{"hypothesis": "c", "references": [["d", -0.2]]}\n',
     "line 2: the segment has no reference with a positive weight"),
    ('{"hypothesis": "a", "references": [["b", 2]]}\n', "line 1: reference weight 2.0 is outside [-1, 1]"),
    ('{"hypothesis": "a", "references": [["b", 1]]\n', "line 1: malformed JSON"),
    ('{"hypothesis": "a", "references": [["b"]]}\n', "line 1: reference ['b'] is not a [text, weight] pair"),
])
def test_bad_jsonl_names_the_line(tmp_path, text, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_weighted_segments(path)
    assert message in str(exc.value)


def test_bad_tsv_names_the_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a dog\ta dog\t1\nthe cat\tthe cat\tmaybe\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2: reference weight 'maybe' is not a number"):
        read_weighted_segments(path)


def test_cli_dbleu(tmp_path, capsys, mutt_suite):
    trials = mutt_suite.of("det_sub")
    hyps = [ptb_tokenize(t.corrupted) for t in trials]
    refs = [[ptb_tokenize(r) for r in t.refs(5)] for t in trials]
    _write_jsonl(tmp_path / "det_sub.jsonl",
                 [{"hypothesis": h, "references": [[r, 1.0] for r in rs]} for h, rs in zip(hyps, refs)])
    assert main(["dbleu", str(tmp_path / "det_sub.jsonl"), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    expected = sacrebleu.corpus_bleu(hyps, [[rs[j] for rs in refs] for j in range(5)], tokenize="none").score
    assert record["segments"] == len(trials)
    assert record["delta_bleu"] == pytest.approx(expected, abs=1e-7)
    assert record["bleu_positive_refs"] == pytest.approx(expected, abs=1e-7)

    (tmp_path / "bad.jsonl").write_text('{"hypothesis": "a", "references": [["b", -1]]}\n', encoding="utf-8")
    assert main(["dbleu", str(tmp_path / "bad.jsonl")]) == 2
    assert "line 1" in capsys.readouterr().err
