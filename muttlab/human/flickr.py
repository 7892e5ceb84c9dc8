"""Kendall τ of metrics with the Flickr8K human judgments (Hodosh et al. 2013).

Protocol (as in the caption-metric literature, e.g. Elliott & Keller 2014; Vedantam et al. 2015):

* references of a candidate are the five captions of the *rated image* (``Flickr8k.token.txt``);
* **Flickr8K-Expert** (``ExpertAnnotations.txt``): pairs whose candidate is one of the image's own captions
  are dropped; each of the three expert ratings (1-4) is its own sample, so a candidate's metric score
  appears three times; Kendall **τ-c** (the ratings form a rectangular table);
* **Flickr8K-CrowdFlower** (``CrowdFlowerAnnotations.txt``): the human score is the fraction of "yes"
  judgments; a candidate that is one of the image's captions is removed from its own references (four
  remain); Kendall **τ-b**.

τ is reported × 100 with a paired bootstrap percentile CI (:func:`muttlab.human.stats.correlate`), on scores
oriented so that larger is better (an error rate such as TER is negated), so every τ reads the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from muttlab.human import stats
from muttlab.errors import DataError
from muttlab.engine.runner import registry_for
from muttlab.settings import Settings
from muttlab.engine.sources import CaptionJudgment, load_flickr_captions, load_flickr_crowdflower, load_flickr_expert
from muttlab.human.scoring import ProgressFn, choose_metrics, oriented, score_with
from muttlab.metrics.registry import Registry

DATASETS = ("expert", "crowdflower")
VARIANTS = {"expert": "tau_c", "crowdflower": "tau_b"}
_METHOD = {"tau_c": "kendall_c", "tau_b": "kendall_b"}
COLUMNS = ["metric", "dataset", "variant", "tau", "ci_low", "ci_high", "n", "candidates", "signature"]


@dataclass(frozen=True)
class JudgedCaptions:
    """The vectors of one Flickr8K judgment set, ready to score and correlate.

    ``candidates[i]`` is scored against ``references[i]``; ``human[k]`` is a rating of candidate
    ``item[k]`` (Expert has three samples per candidate, CrowdFlower one).
    """

    dataset: str
    candidates: list[str]
    references: list[list[str]]
    caption_ids: list[str]
    images: list[str]
    human: np.ndarray
    item: np.ndarray
    dropped: int = 0  # pairs left out by the protocol (Expert: the candidate is one of the image's captions)

    @property
    def variant(self) -> str:
        return VARIANTS[self.dataset]


@dataclass
class FlickrStudy:
    """τ of each metric with each dataset: ``table`` has the columns of :data:`COLUMNS`."""

    table: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    n_boot: int = stats.DEFAULT_N_BOOT
    seed: int = 0

    def notes(self) -> list[str]:
        return [f"{name} skipped: {why}" for name, why in self.skipped.items()]

    def records(self) -> list[dict]:
        """JSON-ready records (the ``--format json`` output of ``muttlab correlate flickr8k``)."""
        return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in rec.items()}
                for rec in self.table.to_dict(orient="records")]


def _caption(captions: dict[str, tuple[str, ...]], caption_id: str, path: str) -> str:
    image, _, k = caption_id.rpartition("#")
    try:
        return captions[image][int(k)]
    except (KeyError, ValueError, IndexError):
        raise DataError(path, f"caption {caption_id!r} is not in Flickr8k.token.txt",
                        fix="use the Flickr8k files distributed together") from None


def expert_samples(settings: Settings) -> JudgedCaptions:
    """Flickr8K-Expert under the protocol above: 5,664 candidates, 16,992 rating samples on the shipped data."""
    captions = load_flickr_captions(settings)
    judgments = load_flickr_expert(settings)
    kept = [j for j in judgments if j.caption_image != j.image]
    cands = [_caption(captions, j.caption_id, "flickr8k/ExpertAnnotations.txt") for j in kept]
    refs = [list(captions[j.image]) for j in kept]
    human = np.array([s for j in kept for s in j.scores], dtype=np.float64)
    item = np.repeat(np.arange(len(kept)), 3)
    return JudgedCaptions("expert", cands, refs, [j.caption_id for j in kept], [j.image for j in kept],
                          human, item, dropped=len(judgments) - len(kept))


def crowdflower_samples(settings: Settings) -> JudgedCaptions:
    """Flickr8K-CrowdFlower under the protocol above: 47,830 candidates, one sample each (fraction of yes)."""
    captions = load_flickr_captions(settings)
    judgments: list[CaptionJudgment] = load_flickr_crowdflower(settings)
    cands, refs = [], []
    for j in judgments:
        cand = _caption(captions, j.caption_id, "flickr8k/CrowdFlowerAnnotations.txt")
        own = list(captions[j.image])
        if j.caption_image == j.image:
            own.pop(int(j.caption_id.rpartition("#")[2]))
        cands.append(cand)
        refs.append(own)
    human = np.array([j.scores[0] for j in judgments], dtype=np.float64)
    return JudgedCaptions("crowdflower", cands, refs, [j.caption_id for j in judgments],
                          [j.image for j in judgments], human, np.arange(len(judgments)))


def load_judged(settings: Settings, dataset: str) -> JudgedCaptions:
    if dataset == "expert":
        return expert_samples(settings)
    if dataset == "crowdflower":
        return crowdflower_samples(settings)
    raise ValueError(f"unknown Flickr8K dataset {dataset!r}; use one of {', '.join(DATASETS)}")


def flickr_correlations(settings: Settings, metrics="all", datasets=DATASETS, n_boot: int = stats.DEFAULT_N_BOOT,
                        seed: int | None = None, registry: Registry | None = None,
                        progress: ProgressFn | None = None) -> FlickrStudy:
    """Kendall τ × 100 of each available metric with Flickr8K-Expert (τ-c) and CrowdFlower (τ-b).

    Args:
      metrics: ``all`` (every available metric), a comma-separated string or a list of registry names;
        a known but unavailable metric is skipped and listed in ``FlickrStudy.skipped``.
      datasets: any of ``expert``, ``crowdflower``.
      n_boot: bootstrap resamples for the CI (0 = no interval); seed defaults to ``settings.seed``.
    Returns:
      :class:`FlickrStudy` whose table has one row per metric x dataset: ``tau``, ``ci_low``, ``ci_high``
      (all × 100), ``n`` (rating samples), ``candidates`` and the metric's ``signature``.
    """
    registry = registry or registry_for(settings)
    seed = settings.seed if seed is None else seed
    choice = choose_metrics(metrics, registry)
    data = [load_judged(settings, d) for d in datasets]
    rows = []
    steps = len(choice.metrics) * len(data)
    for m_index, metric in enumerate(choice.metrics):
        for d_index, judged in enumerate(data):
            if progress:
                progress(m_index * len(data) + d_index, steps, f"{metric.name} on {judged.dataset}")
            scores = oriented(score_with(metric, judged.candidates, judged.references, settings, registry), metric)
            corr = stats.correlate(scores[judged.item], judged.human, _METHOD[judged.variant], n_boot=n_boot,
                                   seed=seed)
            rows.append({"metric": metric.name, "dataset": judged.dataset, "variant": judged.variant,
                         "tau": 100 * corr.value, "ci_low": 100 * corr.ci_low, "ci_high": 100 * corr.ci_high,
                         "n": corr.n, "candidates": len(judged.candidates), "signature": metric.signature()})
    if progress:
        progress(steps, steps, "done")
    return FlickrStudy(pd.DataFrame(rows, columns=COLUMNS), dict(choice.skipped), n_boot, seed)
