"""The public API (muttlab.api) on the bundled sample and the real data: the CLI and the pages call it."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from muttlab import api
from muttlab.cli import main
from muttlab.sources import load_sample
from muttlab.errors import InvalidArgument, MetricError, MuttlabError, UnknownCorruption, UnknownMetric
from tests.engine.counting_metric import WordOverlap


def test_run_grid_on_the_sample_is_the_cli_grid(sample_settings, capsys, monkeypatch):
    results = api.run_grid(sample_settings, metrics=["BLEU-4", "ROUGE-L"], ref_counts=[5])
    cells = results.accuracy()
    assert set(cells["metric"]) == {"BLEU-4", "ROUGE-L"}
    assert cells["n"].sum() == 2 * len(load_sample().trials)  # every sample trial, once per metric
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    code = main(["run", "--cache-dir", str(sample_settings.cache_dir), "--metrics", "BLEU-4,ROUGE-L", "--refs", "5",
                 "--format", "json"])
    assert code == 0
    import json
    cli = json.loads(capsys.readouterr().out)
    assert [(c["metric"], c["corruption"], c["passed"]) for c in cli] == \
        [(r.metric, r.corruption, int(r.passed)) for r in cells.itertuples()]


class _Scored(MuttlabError):
    """Stops a run once the runner has been told what to score."""


def test_default_metrics_are_one_list_for_the_readme_the_cli_and_the_api(sample_settings, monkeypatch):
    """`muttlab run` without --metrics and `api.run_grid` without metrics ask the runner for the same metrics, in
    the README's order. (The dashboard's Run page preselects api.DEFAULT_METRICS, dashboard/views/run.py.)"""
    from muttlab.engine import runner
    from tests.conftest import REPO

    asked = []

    def scored(suite, metrics, ref_counts, settings, registry, **kwargs):
        asked.append(registry.resolve(metrics))  # as the runner reads them: a list or a comma-separated string
        raise _Scored("scored")

    monkeypatch.setattr(runner, "run", scored)
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    assert main(["run", "--suite", "sample", "--refs", "5", "--cache-dir", str(sample_settings.cache_dir)]) == 2
    with pytest.raises(_Scored):
        api.run_grid(sample_settings, suite="sample", ref_counts=[5])
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"\$ muttlab run +# the default metrics \(([^)]*)\)", readme).group(1).split(", ")
    assert asked == [listed, listed] and len(listed) >= 5


def test_score_reports_a_failing_metric_instead_of_raising(sample_settings):
    frame = api.score(sample_settings, ["BLEU-4", "No-Such-Metric"], ["a man rides a bike", "a dog sleeps"],
                      [["a man is riding a bike"], ["a man is riding a bike"]])
    bleu = frame[frame["metric"] == "BLEU-4"]
    assert bleu["score"].iloc[0] > bleu["score"].iloc[1] >= 0
    missing = frame[frame["metric"] == "No-Such-Metric"]
    assert missing["score"].isna().all() and "unknown metric" in missing["problem"].iloc[0]


def _sample_batches(n: int) -> list[tuple[list[str], list[list[str]]]]:
    """``n`` Playground-like batches from the sample: a trial's original and its corruption against its five
    references."""
    trials = load_sample().trials[:n]
    return [([t.original, t.corrupted], [list(t.refs(5))] * 2) for t in trials]


@pytest.mark.parametrize("metrics", [["BLEU-4", "ROUGE-L", "CIDEr-D"], ["METEOR-1.5"]])
def test_batches_scored_together_are_each_batch_scored_alone(sample_settings, tmp_path, metrics):
    """What a server's queue gives the visitors whose Playground requests it scores in one call."""
    batches = _sample_batches(5)
    together = api.score_together(sample_settings, metrics, batches)
    alone = sample_settings.with_overrides(cache_dir=tmp_path / "alone")  # nothing scored together is read back
    assert len(together) == len(batches)
    for frame, (candidates, references) in zip(together, batches):
        pd.testing.assert_frame_equal(frame, api.score(alone, metrics, candidates, references))


def test_cider_scores_each_batch_with_its_own_statistics_when_scored_together(sample_settings, tmp_path):
    batches = _sample_batches(5)
    together = api.score_together(sample_settings, ["CIDEr-D"], batches)
    # Over the batches as one corpus, CIDEr-D's document frequencies (and so its scores) would be other ones.
    as_one = api.score(sample_settings.with_overrides(cache_dir=tmp_path / "one"), ["CIDEr-D"],
                       [c for cands, _ in batches for c in cands], [r for _, refs in batches for r in refs])
    assert not np.allclose(pd.concat(together)["score"].to_numpy(), as_one["score"].to_numpy())


class _FailsOnPoison(WordOverlap):
    """Scores as :class:`WordOverlap`, but refuses a batch holding the word "poison"."""

    name = "fails-on-poison"

    def _score(self, candidates, references):
        if any("poison" in c for c in candidates):
            raise MetricError("fails-on-poison: this candidate cannot be scored")
        return super()._score(candidates, references)


def test_batches_scored_together_cost_one_call_and_never_each_others_scores(sample_settings):
    registry = api.registry_for(sample_settings)
    registry.add(WordOverlap())
    registry.add(_FailsOnPoison())
    batches = _sample_batches(3)
    WordOverlap.calls = 0
    api.score_together(sample_settings, ["word-overlap"], batches, registry)
    assert WordOverlap.calls == 1  # every batch's new items in one metric call

    poisoned = [batches[0], (["a poison candidate"], [["a reference"]]), batches[1]]
    frames = api.score_together(sample_settings, ["fails-on-poison"], poisoned, registry)
    # The poisoned batch alone reports the failure; the others are scored as if it had not been there.
    assert frames[1]["score"].isna().all() and "cannot be scored" in frames[1]["problem"].iloc[0]
    for frame, (candidates, references) in zip((frames[0], frames[2]), (batches[0], batches[1])):
        assert (frame["problem"] == "").all()
        pd.testing.assert_frame_equal(frame, api.score(sample_settings, ["fails-on-poison"], candidates,
                                                       references, registry))


def test_score_together_names_the_malformed_batch(sample_settings):
    batches = _sample_batches(2) + [(["one candidate", "two"], [["one reference list"]])]
    with pytest.raises(InvalidArgument, match=r"batches\[2\].*2 candidates but 1 reference lists"):
        api.score_together(sample_settings, ["BLEU-4"], batches)
    with pytest.raises(InvalidArgument, match=r"batches\[0\].*pair"):
        api.score_together(sample_settings, ["BLEU-4"], ["a man rides a bike"])
    with pytest.raises(InvalidArgument, match=r"batches\[0\].*pair"):  # a mapping is not read by its keys
        api.score_together(sample_settings, ["BLEU-4"], [{"a man rides a bike": 1, "refs": 2}])


def test_corrupt_and_judge_one_sentence(sample_settings):
    sentence, refs = "A man in a red shirt is riding a bike on the road.", ("A man rides a bicycle on a road.",)
    corrupted = api.corrupt(sentence, refs, ["double_PP", "remove_prep", "swap_chunks"], seed=13)
    assert not corrupted.empty and (corrupted["corrupted"] != sentence).all()
    scores = api.score(sample_settings, ["BLEU-4"], [sentence, *corrupted["corrupted"]],
                       [list(refs)] * (1 + len(corrupted)))
    verdicts = api.sentence_verdicts(scores, corrupted, sample_settings)
    assert len(verdicts) == len(corrupted)
    # The verdict is the engine's rule: a strictly better original for fluency corruptions, where scores
    # within the tie tolerance (here absolute: every score is below 1) are a tie and fail.
    for row in verdicts.itertuples():
        assert row.passed == (row.s_orig - row.s_corr > sample_settings.rules.tie.tolerance)


def test_errors_a_caller_can_fix_are_muttlab_errors(sample_settings):
    with pytest.raises(UnknownMetric):
        api.run_grid(sample_settings, metrics=["BLEU-5"], ref_counts=[5])
    with pytest.raises(UnknownCorruption):
        api.run_grid(sample_settings, metrics=["BLEU-4"], corruptions=["no_such_type"], ref_counts=[5])
    with pytest.raises(MuttlabError, match="unknown study"):
        api.correlate(sample_settings, "wmt")
    with pytest.raises(MuttlabError, match="reference lists"):
        api.score(sample_settings, ["BLEU-4"], ["a", "b"], [["a"]])
    assert issubclass(UnknownMetric, MuttlabError) and issubclass(UnknownMetric, KeyError)


def test_correlate_flickr8k_through_the_api(data_settings):
    study = api.correlate(data_settings, "flickr8k", metrics=["BLEU-4"], datasets=("expert",), n_boot=0)
    row = study.table.iloc[0]
    # Hessel et al. 2021 (CLIPScore), Table 1: BLEU-4 τc = 30.8 on Flickr8K-Expert.
    assert row["metric"] == "BLEU-4" and np.isclose(row["tau"], 30.8, atol=1.0)
