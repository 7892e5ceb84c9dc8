"""Flickr8K-Expert / CrowdFlower correlation study on the real data."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from muttlab.errors import MuttlabError
from muttlab.engine.runner import registry_for
from muttlab.sources import load_flickr_captions
from muttlab import judged
from muttlab.human import flickr
from muttlab.metrics.base import Metric


@pytest.fixture(scope="module")
def settings(data_dir, tmp_path_factory):
    from muttlab.settings import Settings
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("cache"), workers=1)


@pytest.fixture(scope="module")
def expert(settings):
    return judged.flickr_expert(settings)


def test_expert_protocol(expert, settings):
    captions = load_flickr_captions(settings)
    # ExpertAnnotations.txt has 5,822 rows (data README); 158 rate one of the image's own captions.
    assert len(expert.candidates) + expert.dropped == 5822
    assert expert.dropped == 158
    assert expert.human.size == 3 * len(expert.candidates)  # each expert rating is its own sample
    assert set(np.unique(expert.human)) <= {1.0, 2.0, 3.0, 4.0}
    for cand, refs, image, cid in zip(expert.candidates, expert.references, expert.groups, expert.ids):
        assert refs == list(captions[image]) and len(refs) == 5
        assert cid.rpartition("#")[0] != image
    # The first row of ExpertAnnotations.txt: image 1056338697_4f7d7ce270.jpg rates 2549968784_39bfbe44f9.jpg#2 1 1 1
    assert expert.ids[0] == "2549968784_39bfbe44f9.jpg#2"
    assert expert.candidates[0] == captions["2549968784_39bfbe44f9.jpg"][2]
    assert list(expert.human.ravel()[:3]) == [1.0, 1.0, 1.0] and list(expert.item[:3]) == [0, 0, 0]


def test_crowdflower_protocol(settings):
    cf = judged.flickr_crowdflower(settings)
    assert len(cf.candidates) == 47830 and cf.human.size == 47830  # CrowdFlowerAnnotations.txt rows
    own = [i for i, (img, cid) in enumerate(zip(cf.groups, cf.ids)) if cid.rpartition("#")[0] == img]
    assert len(own) == 721
    captions = load_flickr_captions(settings)
    for i in own:
        image, _, k = cf.ids[i].rpartition("#")
        # The caption itself leaves the references (by id: a few images have two identical captions).
        assert cf.references[i] == [c for j, c in enumerate(captions[image]) if j != int(k)]
    own_set = set(own)
    others = [i for i in range(len(cf.candidates)) if i not in own_set][:100]
    assert all(len(cf.references[i]) == 5 for i in others)
    # First row: 1056338697_4f7d7ce270.jpg#2 for its own image, 3 yes / 0 no -> fraction 1.
    assert cf.human[0, 0] == 1.0 and len(cf.references[0]) == 4


def test_cider_tau_c_on_expert_matches_published(settings):
    study = flickr.flickr_correlations(settings, "CIDEr-D", datasets=("expert",), n_boot=200, seed=1)
    row = study.table.iloc[0]
    assert (row.metric, row.dataset, row.variant, row.n, row.candidates) == ("CIDEr-D", "expert", "tau_c", 16992, 5664)
    # Anderson et al. 2016 (SPICE), Table 4: CIDEr's caption-level Kendall tau on Flickr 8K is 0.44.
    assert 43.5 <= row.tau < 44.5
    assert row.ci_low < row.tau < row.ci_high and row.ci_high - row.ci_low < 5


def test_bleu1_and_rouge_tau_c_on_expert_match_published(settings):
    study = flickr.flickr_correlations(settings, "BLEU-1,ROUGE-L", datasets=("expert",), n_boot=0)
    taus = study.table.set_index("metric")["tau"]
    # Anderson et al. 2016 (SPICE), Table 4, Flickr 8K: BLEU-1 0.32, ROUGE-L 0.32.
    assert 31.5 <= taus["BLEU-1"] < 32.5
    assert 31.5 <= taus["ROUGE-L"] < 32.5


def test_tau_equals_scipy_on_the_scores(settings, expert):
    registry = registry_for(settings)
    metric = registry.get("BLEU-2")
    study = flickr.flickr_correlations(settings, ["BLEU-2"], datasets=("expert",), n_boot=0, registry=registry)
    scores = metric.score(expert.candidates, expert.references)
    expected = sp.kendalltau(scores[expert.item], expert.human, variant="c").statistic
    assert study.table.iloc[0].tau == pytest.approx(100 * expected, abs=1e-9)
    assert study.records()[0]["ci_low"] is None  # no bootstrap asked: JSON null, not NaN


class _ErrorRate(Metric):
    """-BLEU-1 as a lower-is-better score: the study must negate it and find BLEU-1's tau."""

    name = "BLEU-1-error"
    higher_is_better = False

    def _score(self, candidates, references):
        from muttlab.metrics.bleu import Bleu
        return -Bleu(n=1).score(candidates, references)


def test_error_rates_are_oriented(settings):
    registry = registry_for(settings)
    error = _ErrorRate()
    registry.add(error)
    study = flickr.flickr_correlations(settings, ["BLEU-1", error.name], datasets=("expert",), n_boot=0,
                                       registry=registry)
    taus = study.table.set_index("metric")["tau"]
    assert taus["BLEU-1"] > 0
    assert taus[error.name] == pytest.approx(taus["BLEU-1"], abs=1e-9)


def test_unknown_metric_is_a_user_error(settings):
    with pytest.raises(MuttlabError, match="unknown metric"):
        flickr.flickr_correlations(settings, "NOPE", n_boot=0)
